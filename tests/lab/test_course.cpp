// The course (docs/course/): every lesson has its goal, its one command, its figures, what to
// notice and two or three exercises, each exercise an answer with a command in
// teacher_answers.md; and every lesson's config runs end to end at reduced size (30 steps, 8 test
// sequences per length) and draws the figures the lesson shows. The answers' printed outputs are
// checked by scripts/check_course_answers.py (minutes: not part of the suite).
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "plots/gnuplot.hpp"
#include "tests/support/cli_support.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/support/test_support.hpp"

namespace lenlab {
namespace {

namespace fs = std::filesystem;
using test::read_text;

const fs::path kRepo = fs::path(LENLAB_CONFIGS_DIR).parent_path();
const fs::path kCourse = kRepo / "docs" / "course";

struct Lesson {
  fs::path file;
  std::string text;
  std::string number;  // "1" for 01_….md
};

std::vector<Lesson> lessons() {
  std::vector<Lesson> out;
  for (const auto& e : fs::directory_iterator(kCourse)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".md" || name.size() < 3 || name[0] != '0') continue;
    out.push_back({e.path(), read_text(e.path()), std::to_string(std::stoi(name.substr(0, 2)))});
  }
  std::sort(out.begin(), out.end(),
            [](const Lesson& a, const Lesson& b) { return a.file < b.file; });
  return out;
}

std::vector<std::smatch> all_matches(const std::string& text, const std::regex& re) {
  std::vector<std::smatch> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it)
    out.push_back(*it);
  return out;
}

// The lesson's config, at reduced size: every steps / warmup_steps / eval_samples line lowered.
std::string reduced(std::string config) {
  config = std::regex_replace(config, std::regex(R"((^|\n)steps = \d+)"), "$1steps = 30");
  config =
      std::regex_replace(config, std::regex(R"((^|\n)warmup_steps = \d+)"), "$1warmup_steps = 3");
  return std::regex_replace(config, std::regex(R"((^|\n)eval_samples = \d+)"),
                            "$1eval_samples = 8");
}

}  // namespace

TEST_CASE("course: seven lessons, each with its goal, one command, its figures and exercises") {
  const std::vector<Lesson> all = lessons();
  REQUIRE(all.size() >= 7);
  const std::string answers = read_text(kCourse / "teacher_answers.md");
  const std::string index = read_text(kCourse / "README.md");
  for (const Lesson& l : all) {
    INFO(l.file.filename().string());
    CHECK(std::regex_search(l.text, std::regex(R"(\n\*\*Goal:\*\* [^\n]+)")));
    const auto commands = all_matches(
        l.text,
        std::regex(R"(```sh\n(lenlab run (configs/course/\S+\.toml) --out (course/\d+))\n```)"));
    REQUIRE(commands.size() == 1);
    CHECK(fs::exists(kRepo / commands[0][2].str()));
    CHECK(index.find(commands[0][1].str()) != std::string::npos);  // the index lists it
    const auto figures = all_matches(l.text, std::regex(R"(`course/\d+/fig([\w-]+)\.png`)"));
    CHECK(!figures.empty());
    CHECK(l.text.find("\n## What to notice\n") != std::string::npos);
    CHECK(l.text.find("\n## Exercises\n") != std::string::npos);
    const auto exercises =
        all_matches(l.text, std::regex("\\n\\d\\. \\*\\*(" + l.number + "\\.\\d)\\*\\*"));
    CHECK(exercises.size() >= 2);
    CHECK(exercises.size() <= 3);
    for (const auto& e : exercises) {
      INFO("exercise " << e[1].str());
      const size_t at = answers.find("\n### " + e[1].str() + "\n");
      REQUIRE(at != std::string::npos);
      const size_t next = answers.find("\n#", at + 5);
      CHECK(answers.substr(at, next - at).find("```sh\n") != std::string::npos);
    }
  }
}

TEST_CASE("course: every lesson's config runs at reduced size and draws the lesson's figures") {
  const bool drawing = gnuplot_available(PlotOptions{});
  if (!drawing)
    MESSAGE("figures' data only: gnuplot is not installed (apt-get install gnuplot-nox)");
  std::vector<Lesson> all = lessons();
#ifdef LENLAB_SANITIZED
  // Under the sanitizers (scripts/test.sh debug) the seven runs take minutes: the first lesson
  // checks the path there, and the release suite runs every lesson.
  MESSAGE("sanitizer build: only lesson 1's config runs (the release suite runs all seven)");
  all.erase(all.begin() + 1, all.end());
#endif
  for (const Lesson& l : all) {
    INFO(l.file.filename().string());
    std::smatch command;
    REQUIRE(std::regex_search(l.text, command,
                              std::regex(R"(lenlab run (configs/course/(\S+)\.toml) --out)")));
    const fs::path dir = test::fresh_dir("course", command[2].str());
    const fs::path config = dir / "small.toml";
    test::write_raw(config, reduced(read_text(kRepo / command[1].str())));
    const fs::path out = dir / "out";
    const test::CliResult r = test::run_cli({"run", config.string(), "--out", out.string()});
    REQUIRE_MESSAGE(r.rc == 0, r.err);
    for (const auto& f : all_matches(l.text, std::regex(R"(`course/\d+/fig([\w-]+)\.png`)"))) {
      const std::string name = "fig" + f[1].str();
      CHECK_MESSAGE(fs::exists(out / (name + ".csv")), name);
      if (drawing) CHECK_MESSAGE(fs::exists(out / (name + ".png")), name);
    }
    CHECK(read_text(out / "report.md").find("## Figures") != std::string::npos);
  }
}

}  // namespace lenlab
