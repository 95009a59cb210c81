// report.html (report/report_html.hpp): report.md rendered, its tables as tables, every figure
// inline (SVG, else PNG as a data URI, else a note), nothing loaded from elsewhere.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
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
  CHECK(html.find("<figure><svg style=\"max-width:10px\" width=\"10\"><rect/></svg>") !=
        std::string::npos);
  CHECK(html.find("<?xml") == std::string::npos);
  CHECK(html.find("src=\"data:image/png;base64,YWJj\"") != std::string::npos);
  CHECK(html.find("src=\"data:image/png;base64,YWI=\"") != std::string::npos);
  CHECK(html.find("src=\"data:image/png;base64,YQ==\"") != std::string::npos);
  CHECK(html.find("figc.png was not drawn") != std::string::npos);
  CHECK(html.find("src=\"fig") == std::string::npos);  // no figure read from the folder
  CHECK(html.find("<figcaption>figure a</figcaption>") != std::string::npos);
}

TEST_CASE("report.html: a figure is as wide as the page, never wider than it was drawn") {
  const auto dir = test::fresh_dir("report_html", "width");
  test::write_raw(dir / "figa.svg",
                  "<?xml version=\"1.0\"?>\n<svg\n width=\"1120\" height=\"700\"\n viewBox=\"0 0 "
                  "1120 700\" stroke-width=\"3\"><rect/></svg>\n");
  // No figb.svg: the PNG, whose width is its IHDR's first four bytes (here 1500 = 0x05dc).
  std::string png = "\x89PNG\r\n\x1a\n";
  png += std::string("\0\0\0\x0dIHDR\0\0\x05\xdc\0\0\x02\x00\x08\x02\0\0\0", 21);
  test::write_raw(dir / "figb.png", png);
  test::write_raw(dir / "figc.svg", "<svg><rect/></svg>");  // no width: the page's alone
  const std::string html =
      report_html("![a](figa.png)\n\n![b](figb.png)\n\n![c](figc.png)\n", dir, "t");
  // The style: every figure's image takes the column's full width, its height in proportion.
  static const std::regex rule(R"re(figure svg, figure img \{([^}]*)\})re");
  std::smatch m;
  REQUIRE(std::regex_search(html, m, rule));
  CHECK(m[1].str().find("width: 100%") != std::string::npos);
  CHECK(m[1].str().find("height: auto") != std::string::npos);
  // Each capped at the width it was drawn at.
  CHECK(html.find("<figure><svg style=\"max-width:1120px\"\n width=\"1120\"") != std::string::npos);
  CHECK(html.find("alt=\"b\" style=\"max-width:1500px\">") != std::string::npos);
  CHECK(html.find("<figure><svg><rect/></svg>") != std::string::npos);
}

}  // namespace lenlab
