#pragma once
// The chat page served at GET /: one self-contained HTML document (inline CSS and script, no
// network fetches but this server's own API), embedded in the binary, so there are no files to
// serve and no path to traverse.
//
//   res.set_content(std::string(web_page_html()), "text/html; charset=utf-8");

#include <string_view>

namespace strata::server {

std::string_view web_page_html();

}  // namespace strata::server
