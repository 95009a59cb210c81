#pragma once
// The live page's files (web/ and the vendored third_party/uplot/), compiled into the binary by
// cmake/embed_text.cmake, so `lenlab serve` works from any directory and downloads nothing.
#include <string_view>
#include <vector>

namespace lenlab {

struct WebAsset {
  std::string_view path;          // URL path, e.g. "/app.js"
  std::string_view content_type;  // e.g. "text/javascript; charset=utf-8"
  std::string_view body;
};

// index.html (served at "/"), app.js, chart.js, style.css, uPlot.iife.min.js, uPlot.min.css.
const std::vector<WebAsset>& web_assets();

}  // namespace lenlab
