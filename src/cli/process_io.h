#pragma once
// The process's arguments and standard streams as the commands expect them on every platform:
// arguments in UTF-8 (Windows passes main() the ANSI code page's bytes; the wide command line
// has the real text), and stderr written at once even when it is a file or a pipe (the C
// runtime of Windows buffers it there, so a log would show "listening on" only at exit).

#include <string>
#include <vector>

namespace strata::cli {

std::vector<std::string> utf8_arguments(int argc, char** argv);
// Windows: stdout and stderr in binary mode, stderr unbuffered, the console's output code page
// UTF-8. POSIX: nothing to do.
void prepare_standard_streams();

}  // namespace strata::cli
