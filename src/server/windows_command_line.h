#pragma once
// A Windows command line from an argument list, quoted so that the child's CommandLineToArgvW (and
// the C runtime's own parser, which follows the same rules) gives back exactly those arguments:
// an argument with a space, a tab or a quote (or an empty one) is wrapped in quotes; inside it,
// a quote is escaped with a backslash, and backslashes are doubled only where a quote follows them
// (a path's "C:\dir\" ends in a backslash before the closing quote). Pure: tested on every platform.
//
//   std::string line = windows_command_line({"C:\\Program Files\\strata.exe", "serve", "--port", "0"});
//   // "\"C:\\Program Files\\strata.exe\" serve --port 0"

#include <string>
#include <string_view>
#include <vector>

namespace strata::server {

std::string quote_windows_argument(std::string_view argument);
std::string windows_command_line(const std::vector<std::string>& arguments);

}  // namespace strata::server
