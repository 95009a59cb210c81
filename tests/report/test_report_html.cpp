// report.html (report/report_html.hpp): report.md rendered, its tables as tables, every figure
// inline (SVG, else PNG as a data URI, else a note), nothing loaded from elsewhere.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "report/report_html.hpp"
#include "tests/support/test_support.hpp"

namespace lenlab {

TEST_CASE("report.html: the report's tables and figures in one page that needs no other file") {
  const auto dir = test::fresh_dir("report_html", "page");
  test::write_raw(dir / "figa.svg",
                  "<?xml version=\"1.0\"?>\n<!DOCTYPE svg>\n<svg width=\"10\"><rect/></svg>\n");
  test::write_raw(dir / "figb.png", "abc");  // no figb.svg: the PNG's bytes, base64
  test::write_raw(dir / "figd.png", "ab");   // base64's two padded tails
  test::write_raw(dir / "fige.png", "a");
  const std::string md =
      "# Report <&>\n\nSome *text*.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
      "![figure a](figa.png)\n\n![figure b](figb.png)\n\n![figure c](figc.png)\n\n"
      "![figure d](figd.png)\n\n![figure e](fige.png)\n";
  const std::string html = report_html(md, dir, "lenlab: <dir>");
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("<title>lenlab: &lt;dir&gt;</title>") != std::string::npos);
  CHECK(html.find("<h1>Report &lt;&amp;&gt;</h1>") != std::string::npos);
  CHECK(html.find("<td>1</td>") != std::string::npos);  // a GFM table, not a paragraph of pipes
  CHECK(html.find("<figure><svg width=\"10\"><rect/></svg>") != std::string::npos);
  CHECK(html.find("<?xml") == std::string::npos);
  CHECK(html.find("src=\"data:image/png;base64,YWJj\"") != std::string::npos);
  CHECK(html.find("src=\"data:image/png;base64,YWI=\"") != std::string::npos);
  CHECK(html.find("src=\"data:image/png;base64,YQ==\"") != std::string::npos);
  CHECK(html.find("figc.png was not drawn") != std::string::npos);
  CHECK(html.find("src=\"fig") == std::string::npos);  // no figure read from the folder
  CHECK(html.find("<figcaption>figure a</figcaption>") != std::string::npos);
}

}  // namespace lenlab
