// Whole-file helpers built on File (platform independent).
#include "core/file.h"

namespace strata {

Result<std::string> read_file_to_string(const std::string& path) {
    STRATA_ASSIGN_OR_RETURN(File f, File::open_read(path));
    return f.read_to_end();
}

Status write_string_to_file(const std::string& path, std::string_view data) {
    STRATA_ASSIGN_OR_RETURN(File f, File::create(path));
    STRATA_TRY(f.write(data.data(), data.size()));
    return f.close();
}

}  // namespace strata
