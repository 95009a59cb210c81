// The tidy CSVs' text columns: a figure line's label or a reparam expression holding a comma or a
// quote stays one field (configs/dependence.toml's "window, 1 global" once split into two columns).
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "core/csv.hpp"
#include "plots/figure_data.hpp"

using namespace lenlab;

namespace {

// One CSV record's fields, RFC 4180 (quoted fields, doubled quotes).
std::vector<std::string> parse_record(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

}  // namespace

TEST_CASE("csv_field quotes only what needs it, and doubles quotes") {
  CHECK(csv_field("plain") == "plain");
  CHECK(csv_field("window, 1 global") == "\"window, 1 global\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("two\nlines") == "\"two\nlines\"");
  CHECK(csv_quoted("x^-0.5") == "\"x^-0.5\"");
  CHECK(parse_record(csv_field("a, \"b\"") + ",c") == std::vector<std::string>{"a, \"b\"", "c"});
}

TEST_CASE("a figure's CSV keeps a label with commas and quotes in one column") {
  FigureSpec spec;
  spec.name = "lambda";
  spec.metric = "mse";
  RunRecord run;
  run.status = "completed";
  run.id = "length-rope-x";
  run.spec.task = "length";
  run.spec.reparam = "max(x, 1)";
  LengthResult row;
  row.length = 3;
  row.mse = 0.5;
  run.results.push_back(row);
  FigureSummary fig;
  fig.spec = &spec;
  FigureLine line;
  line.label = "window, 1 global \"BOS\"";
  line.runs.push_back(&run);
  fig.lines.push_back(line);
  std::istringstream csv(figure_csv(fig));
  std::string header, first;
  std::getline(csv, header);
  std::getline(csv, first);
  const std::vector<std::string> names = parse_record(header), fields = parse_record(first);
  REQUIRE(fields.size() == names.size());
  CHECK(fields[1] == line.label);
  CHECK(fields[5] == "max(x, 1)");
  CHECK(fields[11] == "3");  // length
}
