// Whole-file helpers built on File (platform independent).
#include "core/file.h"

#include <cstdio>

namespace strata {

Result<std::string> read_file_to_string(const std::string& path) {
    if (path == "-") {  // standard input, on every platform (Windows has no /dev/stdin)
        std::string data;
        char buf[64 * 1024];
        for (size_t got; (got = std::fread(buf, 1, sizeof buf, stdin)) > 0;) data.append(buf, got);
        if (std::ferror(stdin)) return Status::error("reading standard input failed");
        return data;
    }
    STRATA_ASSIGN_OR_RETURN(File f, File::open_read(path));
    return f.read_to_end();
}

Status write_string_to_file(const std::string& path, std::string_view data) {
    STRATA_ASSIGN_OR_RETURN(File f, File::create(path));
    STRATA_TRY(f.write(data.data(), data.size()));
    return f.close();
}

}  // namespace strata
