// Settings that name files on the server (rows with Setting::kServerPath) are never taken from the
// page as paths (lab/serve/server_paths.hpp): corpus by a name the teacher offers, init_from by the
// number of a completed run of this server. The checker goes by the trait: every such row is
// refused as a path, whatever its name.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "lab/serve/page_settings.hpp"
#include "lab/serve/run_sample.hpp"
#include "lab/serve/server.hpp"
#include "lab/serve/server_paths.hpp"
#include "results/run_record.hpp"
#include "tasks/text_corpus.hpp"
#include "tests/support/cli_support.hpp"
#include "tests/support/serve_support.hpp"
#include "tests/support/test_support.hpp"

// Last: it includes <resolv.h>, whose `_res` macro breaks Eigen headers included after it.
#include <httplib.h>
#include "tests/lab/serve_test_support.hpp"

using namespace lenlab;
using namespace lenlab::test;

namespace {

// A small text corpus (3000 bytes of one phrase) in `dir`.
fs::path write_text(const fs::path& dir, const std::string& name) {
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "in the beginning "[i % 17];
  const fs::path p = dir / name;
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

std::vector<const char*> server_path_keys() {
  std::vector<const char*> keys;
  const TrainSpec fields;
  visit_spec_fields(fields, [&](const Setting& row, const auto&) {
    if (row.has(Setting::kServerPath)) keys.push_back(row.key);
  });
  return keys;
}

std::string only_message(const std::vector<FieldError>& errors, const std::string& field) {
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].field == field);
  return errors[0].message;
}

}  // namespace

TEST_CASE("every setting marked kServerPath is refused by the page when given as a path") {
  TempDir dir;
  const fs::path there = write_text(dir.path, "secret.txt");
  const fs::path nowhere = dir.path / "missing" / "nothing.txt";
  fs::create_directories(dir.path / "runs" / "abc");
  const std::vector<const char*> keys = server_path_keys();
  // The rows that name files today; a new one is covered by the loop below without a name.
  CHECK(std::find_if(keys.begin(), keys.end(),
                     [](const char* k) { return std::string(k) == "corpus"; }) != keys.end());
  CHECK(std::find_if(keys.begin(), keys.end(),
                     [](const char* k) { return std::string(k) == "init_from"; }) != keys.end());

  const ServerPaths none;  // a checker without rules refuses them all
  const ServerPaths page = page_server_paths(
      {{"tiny", there.string()}},
      [&](int number) {
        return number == 1 ? FinishedRun{"completed", dir.path / "runs" / "abc"} : FinishedRun{};
      },
      [] { return 1; });
  for (const char* key : keys) {
    for (const ServerPaths* rules : {&none, &page}) {
      INFO("setting " << key << (rules == &none ? " without rules" : " with the page's rules"));
      for (const std::string& path :
           {there.string(), nowhere.string(), dir.path.string(), (dir.path / "runs/abc").string(),
            std::string("/etc/passwd")}) {
        INFO("path " << path);
        const auto errors =
            check_page_settings(tiny({{key, path}}), Budget{}, false, *rules).errors;
        const std::string message = only_message(errors, key);
        // Nothing about what is there: the message is the same for a path that exists.
        std::string generic = message;
        for (size_t at = generic.find(path); at != std::string::npos; at = generic.find(path))
          generic.replace(at, path.size(), "PATH");
        const auto other =
            check_page_settings(tiny({{key, "/no/such/file"}}), Budget{}, false, *rules).errors;
        std::string other_generic = only_message(other, key);
        for (size_t at = other_generic.find("/no/such/file"); at != std::string::npos;
             at = other_generic.find("/no/such/file"))
          other_generic.replace(at, 13, "PATH");
        CHECK(generic == other_generic);
        CHECK(message.find("exist") == std::string::npos);
        CHECK(message.find("cannot") == std::string::npos);
      }
    }
  }
}

TEST_CASE("corpus: a path is refused listing the offered names, and an offered name trains on it") {
  TempDir dir;
  const fs::path corpus = write_text(dir.path, "phrase.txt");
  ServeOptions o;
  o.queue.out = dir.path / "served";
  o.queue.corpora = offered_corpora({"phrase=" + corpus.string()});
  ServedPage page(o);
  httplib::Client http("127.0.0.1", page.port);

  const auto options = http.Get("/api/options");
  REQUIRE(options);
  const PageJson corpora = PageJson::parse(options->body)["corpora"];
  CHECK(std::find(corpora.begin(), corpora.end(), "phrase") != corpora.end());

  const auto by_path =
      http.Post("/api/runs", tiny({{"task", "text"}, {"corpus", corpus.string()}}).dump(),
                "application/json");
  REQUIRE(by_path);
  CHECK(by_path->status == 400);
  const PageJson error = PageJson::parse(by_path->body)["errors"][0];
  CHECK(error["field"] == "corpus");
  const std::string message = error["message"];
  CHECK(message.find("'phrase'") != std::string::npos);
  CHECK(message.find("never a path") != std::string::npos);
  CHECK(page.server.queue().size() == 0);

  const auto by_name = http.Post("/api/runs", tiny({{"task", "text"}, {"corpus", "phrase"}}).dump(),
                                 "application/json");
  REQUIRE(by_name);
  INFO(by_name->body);
  REQUIRE(by_name->status == 200);
  const int number = PageJson::parse(by_name->body)["number"];
  const PageJson done = wait_finished(page.server.queue(), number);
  CHECK(done["state"] == "completed");
  // Clients see the name, never the path; the run read the file offered.
  CHECK(done["settings"]["corpus"] == "phrase");
  CHECK(done.dump().find(corpus.string()) == std::string::npos);
  const auto record = load_run(*page.server.queue().finished_folder(number));
  REQUIRE(record);
  CHECK(record->corpus_hash == open_corpus(corpus.string())->hash());

  // The page's sample beside the run's curve: what the run writes after the test split's first
  // characters, in the corpus's alphabet; the same text again (kept); never the path.
  const auto sample = http.Get(fmt::format("/api/runs/{}/sample", number));
  REQUIRE(sample);
  INFO(sample->body);
  REQUIRE(sample->status == 200);
  const PageJson written = PageJson::parse(sample->body);
  const std::string prompt = written["prompt"], text = written["text"];
  CHECK(prompt == open_corpus(corpus.string())
                      ->split_text(CorpusSplit::kTest)
                      .substr(0, kSamplePromptCharacters));
  CHECK(text.size() == static_cast<size_t>(kSampleTokens));
  CHECK(text.find_first_not_of("in thebgu") == std::string::npos);
  CHECK(sample->body.find(corpus.string()) == std::string::npos);
  const auto again = http.Get(fmt::format("/api/runs/{}/sample", number));
  REQUIRE(again);
  CHECK(again->body == sample->body);
  // No sample for a run that is not a text run, nor for a number that is no run.
  const auto mean = http.Post("/api/runs", tiny().dump(), "application/json");
  REQUIRE(mean);
  REQUIRE(mean->status == 200);
  const int scalar = PageJson::parse(mean->body)["number"];
  wait_finished(page.server.queue(), scalar);
  for (const int n : {scalar, 99}) {
    const auto none = http.Get(fmt::format("/api/runs/{}/sample", n));
    REQUIRE(none);
    CHECK(none->status == 404);
    CHECK(none->body.find("no sample") != std::string::npos);
  }
}

// Found by fuzz_serve_request (docs/fuzzing.md): a message that says "corpus PATH" read "corpus
// corpus 'NAME'" once the path was replaced by the words the client knows.
TEST_CASE("an offered corpus that cannot be used is named once, by its name, never its path") {
  TempDir dir;
  const fs::path small = dir.path / "small.txt";
  std::ofstream(small, std::ios::binary) << "too short to train on\n";
  const fs::path gone = dir.path / "gone.txt";
  const ServerPaths page = page_server_paths(
      {{"small", small.string()}, {"gone", gone.string()}}, [](int) { return FinishedRun{}; },
      [] { return 0; });
  for (const std::string name : {"small", "gone"}) {
    INFO("corpus " << name);
    const std::string message = only_message(
        check_page_settings(tiny({{"task", "text"}, {"corpus", name}}), Budget{}, false, page)
            .errors,
        "corpus");
    CHECK(message.find("corpus '" + name + "'") != std::string::npos);
    CHECK(message.find("corpus corpus") == std::string::npos);
    CHECK(message.find(dir.path.string()) == std::string::npos);
  }
}

TEST_CASE("--corpus NAME=FILE is checked at start-up, naming the bad value") {
  TempDir dir;
  const fs::path corpus = write_text(dir.path, "phrase.txt");
  const auto refused = [](const std::vector<std::string>& flags, const std::string& words) {
    INFO("--corpus " << flags.back());
    CHECK_THROWS_WITH_AS(offered_corpora(flags), doctest::Contains(words.c_str()), UsageError);
  };
  refused({"phrase"}, "--corpus 'phrase' is not NAME=FILE");
  refused({"=" + corpus.string()}, "is not NAME=FILE");
  refused({"a/b=" + corpus.string()}, "is not NAME=FILE");
  refused({"phrase="}, "is not NAME=FILE");
  refused({"phrase=" + (dir.path / "none.txt").string()}, "is not a readable regular file");
  refused({"phrase=" + dir.path.string()}, "is not a readable regular file");
  refused({"p=" + corpus.string(), "p=" + corpus.string()}, "the name 'p' is offered already");
  const auto offered = offered_corpora({"p=" + corpus.string()});
  CHECK(offered.at("p") == corpus.string());
  if (offered.count(kDefaultCorpusName)) {  // a build with the default corpus offers it
    CHECK(offered.at(kDefaultCorpusName).empty());
    refused({std::string(kDefaultCorpusName) + "=" + corpus.string()}, "build's default corpus");
  }
}

TEST_CASE("init_from takes a run of this server by number once it has completed") {
  TempDir dir;
  ServeOptions o;
  o.queue.out = dir.path;
  o.queue.max_running = 1;
  ServedPage page(o);
  httplib::Client http("127.0.0.1", page.port);
  const auto post = [&](const PageJson& settings) {
    const auto answer = http.Post("/api/runs", settings.dump(), "application/json");
    REQUIRE(answer);
    return std::make_pair(answer->status, PageJson::parse(answer->body));
  };
  // A longer run trains first, so that the parent waits in the queue behind it.
  const auto [first_status, first] = post(tiny({{"steps", 400}, {"seed", 7}}));
  REQUIRE(first_status == 200);
  const auto [parent_status, parent] = post(tiny());
  REQUIRE(parent_status == 200);
  const int number = parent["number"];
  const auto [early_status, early] = post(tiny({{"init_from", number}, {"l_train", 4}}));
  CHECK(early_status == 400);
  CHECK(early["errors"][0]["field"] == "init_from");
  const std::string early_message = early["errors"][0]["message"];
  CHECK(early_message.find(fmt::format("run {} is queued", number)) != std::string::npos);
  CHECK(early_message.find("wait until it has finished") != std::string::npos);
  CHECK(page.server.queue().size() == 2);  // nothing queued by the refusal

  for (const PageJson& bad : {PageJson("served/runs/x"), PageJson(dir.path.string()), PageJson(0),
                              PageJson(-1), PageJson("run:"), PageJson(2.5)}) {
    INFO("init_from " << bad.dump());
    const auto [status, body] = post(tiny({{"init_from", bad}}));
    CHECK(status == 400);
    CHECK(body["errors"][0]["field"] == "init_from");
    CHECK(body["errors"][0]["message"].get<std::string>().find("e.g. 3 or \"run:3\"") !=
          std::string::npos);
  }
  const auto [missing_status, missing] = post(tiny({{"init_from", 99}}));
  CHECK(missing_status == 400);
  CHECK(missing["errors"][0]["message"].get<std::string>().find("there is no run 99") !=
        std::string::npos);

  wait_finished(page.server.queue(), number);
  for (const PageJson& form : {PageJson(number), PageJson(std::to_string(number)),
                               PageJson(fmt::format("run:{}", number))}) {
    INFO("init_from " << form.dump());
    const auto [status, child] = post(tiny({{"init_from", form}, {"l_train", 4}}));
    INFO(child.dump());
    REQUIRE(status == 200);
    const PageJson run = wait_finished(page.server.queue(), child["number"]);
    CHECK(run["state"] == "completed");
    // Named by its parent's id, never its folder.
    CHECK(run["settings"]["init_parent"] == parent["id"]);
    CHECK(!run["settings"].contains("init_from"));
    CHECK(run["label"].get<std::string>().find(dir.path.string()) == std::string::npos);
  }
  // A parent whose weights the child's model cannot take: the message says "run N", not where.
  const auto [shape_status, shape] = post(tiny({{"init_from", number}, {"d_model", 32}}));
  CHECK(shape_status == 400);
  CHECK(shape.dump().find(dir.path.string()) == std::string::npos);
}
