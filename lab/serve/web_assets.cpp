#include "lab/serve/web_assets.hpp"

namespace lenlab {

// Generated (CMakeLists.txt: one embed_text.cmake call per file).
const char* web_index_html();
const char* web_app_js();
const char* web_chart_js();
const char* web_classroom_js();
const char* web_style_css();
const char* web_uplot_js();
const char* web_uplot_css();

const std::vector<WebAsset>& web_assets() {
  static const std::vector<WebAsset> assets = {
      {"/", "text/html; charset=utf-8", web_index_html()},
      {"/app.js", "text/javascript; charset=utf-8", web_app_js()},
      {"/chart.js", "text/javascript; charset=utf-8", web_chart_js()},
      {"/classroom.js", "text/javascript; charset=utf-8", web_classroom_js()},
      {"/style.css", "text/css; charset=utf-8", web_style_css()},
      {"/uPlot.iife.min.js", "text/javascript; charset=utf-8", web_uplot_js()},
      {"/uPlot.min.css", "text/css; charset=utf-8", web_uplot_css()},
  };
  return assets;
}

}  // namespace lenlab
