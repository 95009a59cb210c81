#pragma once
// CSV fields as RFC 4180 has them, for the text columns of lenlab's tidy CSVs (a figure line's
// label, a reparam expression): a field holding a comma, a quote or a line break is quoted, its
// quotes doubled, so that every CSV reader (Python's csv, pandas, R) sees the right columns.
#include <string>

namespace lenlab {

// `text` quoted whatever it holds (a column that is always quoted).
inline std::string csv_quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// `text` as one CSV field: as is when it needs no quotes, else quoted.
inline std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  return csv_quoted(text);
}

}  // namespace lenlab
