#include "report/report_html.hpp"

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>
#include <fmt/format.h>

#include <memory>
#include <regex>
#include <stdexcept>

#include "core/regular_file.hpp"

namespace lenlab {

namespace fs = std::filesystem;

namespace {

// A figure the report inlines: a regular file of bounded size (read_regular_file refuses others).
std::string read_file(const fs::path& p) {
  return read_regular_file(p, kTableFileLimit, "figure");
}

std::string escape_html(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string base64(const std::string& bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned n = (static_cast<unsigned char>(bytes[i]) << 16) |
                       (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    for (const int shift : {18, 12, 6, 0}) out += kAlphabet[(n >> shift) & 63];
  }
  if (i < bytes.size()) {
    unsigned n = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// Markdown → HTML with GitHub's tables (report.md's tables are GFM).
std::string render_markdown(const std::string& markdown) {
  cmark_gfm_core_extensions_ensure_registered();
  std::unique_ptr<cmark_parser, void (*)(cmark_parser*)> parser(cmark_parser_new(CMARK_OPT_DEFAULT),
                                                                cmark_parser_free);
  if (cmark_syntax_extension* table = cmark_find_syntax_extension("table"))
    cmark_parser_attach_syntax_extension(parser.get(), table);
  else
    throw std::runtime_error("cmark-gfm has no table extension");
  cmark_parser_feed(parser.get(), markdown.data(), markdown.size());
  std::unique_ptr<cmark_node, void (*)(cmark_node*)> doc(cmark_parser_finish(parser.get()),
                                                         cmark_node_free);
  char* html = cmark_render_html(doc.get(), CMARK_OPT_DEFAULT,
                                 cmark_parser_get_syntax_extensions(parser.get()));
  std::string out(html);
  free(html);
  return out;
}

// A figure is shown as wide as the page (figures are drawn at least that wide and their text sized
// for it, plots/gnuplot_style.hpp), never wider than it was drawn: its width, in px, as a style.
// `width`: the SVG's width attribute or the PNG's; 0 (unknown): no limit but the page.
std::string up_to(long width) {
  return width > 0 ? fmt::format(" style=\"max-width:{}px\"", width) : "";
}

// The width attribute of an SVG's opening tag ("992" or "992px"); 0 when it has none.
long svg_width(const std::string& svg) {
  static const std::regex width(R"re(\swidth="([0-9]{1,9})(px)?")re");
  const std::string tag = svg.substr(0, svg.find('>'));
  std::smatch m;
  return std::regex_search(tag, m, width) ? std::stol(m[1].str()) : 0;
}

// A PNG's width: the first four bytes of its IHDR chunk (after the 8-byte signature, the chunk's
// length and its name), big-endian; 0 for bytes that are no PNG.
long png_width(const std::string& png) {
  if (png.size() < 24 || png.compare(12, 4, "IHDR") != 0) return 0;
  long w = 0;
  for (size_t i = 16; i < 20; ++i) w = w * 256 + static_cast<unsigned char>(png[i]);
  return w;
}

// A figure as inline markup: its SVG without the XML prolog and doctype, else its PNG as a data
// URI, else a note.
std::string inline_figure(const fs::path& dir, const std::string& png, const std::string& alt) {
  const fs::path svg = dir / fs::path(png).replace_extension(".svg");
  std::string body;
  if (fs::exists(svg)) {
    body = read_file(svg);
    const size_t start = body.find("<svg");
    body = start == std::string::npos ? "" : body.substr(start);
    if (!body.empty()) body.insert(4, up_to(svg_width(body)));
  }
  if (body.empty() && fs::exists(dir / png)) {
    const std::string bytes = read_file(dir / png);
    body = fmt::format("<img src=\"data:image/png;base64,{}\" alt=\"{}\"{}>", base64(bytes), alt,
                       up_to(png_width(bytes)));
  }
  if (body.empty())
    body = fmt::format(
        "<p class=\"missing\">{} was not drawn (no gnuplot: apt-get install "
        "gnuplot-nox, then lenlab plot on this folder).</p>",
        escape_html(png));
  return fmt::format("<figure>{}<figcaption>{}</figcaption></figure>", body, alt);
}

const char* kStyle = R"(
body { font-family: sans-serif; max-width: 62rem; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.45; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; }
th { background: #f3f3f3; }
figure { margin: 1rem 0; }
figure svg, figure img { display: block; width: 100%; height: auto; }
figcaption { font-size: 0.85rem; color: #555; }
code { background: #f3f3f3; padding: 0 0.2rem; }
.missing { color: #a00; }
)";

}  // namespace

std::string report_html(const std::string& markdown, const fs::path& dir,
                        const std::string& title) {
  std::string body = render_markdown(markdown);
  // cmark writes an image as <img src="figX.png" alt="…" /> (inside a paragraph of its own).
  static const std::regex image(R"re(<p><img src="([^"]+\.png)" alt="([^"]*)" /></p>)re");
  std::string out;
  auto it = std::sregex_iterator(body.begin(), body.end(), image);
  size_t last = 0;
  for (; it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    out += body.substr(last, static_cast<size_t>(m.position()) - last);
    out += inline_figure(dir, m[1].str(), m[2].str());
    last = static_cast<size_t>(m.position() + m.length());
  }
  out += body.substr(last);
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n"
      "<style>{}</style>\n</head>\n<body>\n{}</body>\n</html>\n",
      escape_html(title), kStyle, out);
}

}  // namespace lenlab
