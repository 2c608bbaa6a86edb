#ifndef _WIN32
#include "cli/process_io.h"

namespace strata::cli {

std::vector<std::string> utf8_arguments(int argc, char** argv) { return {argv, argv + argc}; }
void prepare_standard_streams() {}

}  // namespace strata::cli
#endif  // !_WIN32
