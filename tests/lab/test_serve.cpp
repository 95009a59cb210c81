// `lenlab serve`: the page's settings check (the CLI's errors, each beside its field; a run far too
// large refused at once), the run queue (positions, reuse, results as they are scored, a folder
// `lenlab plot` can read, kept across restarts) and the HTTP API end to end over a real socket,
// hostile requests included. The page itself is tested in a browser
// (tests/browser/live_page.test.mjs); the server under load in test_serve_load.cpp.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "lab/experiment/experiment_config.hpp"
#include "lab/experiment/plan.hpp"
#include "lab/serve/page_settings.hpp"
#include "lab/serve/run_queue.hpp"
#include "lab/serve/server.hpp"
#include "results/figure_setup.hpp"
#include "results/run_record.hpp"
#include "tests/support/cli_support.hpp"
#include "tests/support/serve_support.hpp"
#include "tests/support/test_support.hpp"

// Last: it includes <resolv.h>, whose `_res` macro breaks Eigen headers included after it.
#include <httplib.h>
#include "tests/lab/serve_test_support.hpp"

using namespace lenlab;
using namespace lenlab::test;
namespace fs = std::filesystem;

TEST_CASE("the page's settings check gives the CLI's errors, each beside the field to blame") {
  CHECK(errors_of(tiny()).empty());
  CHECK(check_page_settings(tiny({{"pe", "rope"}}), Budget{}, false).spec.pe == "rope");

  SUBCASE("a bad expression: the CLI's message, beside reparam alone") {
    // l_train's default (10) over this l_test (6) would change the first error too.
    const auto e = errors_of(tiny({{"reparam", "sqrt(x"}}));
    REQUIRE(e.size() == 1);
    CHECK(e[0].field == "reparam");
    CHECK(e[0].message.find("'sqrt(x' is neither a built-in nor a valid expression") !=
          std::string::npos);
  }
  SUBCASE("unknown keys and wrong types belong to their field") {
    const auto e = errors_of(tiny({{"colour", 1}, {"l_train", "ten"}}));
    REQUIRE(e.size() == 2);
    CHECK(e[0].field == "l_train");
    CHECK(e[0].message.find("must be an integer") != std::string::npos);
    CHECK(e[1].field == "colour");
    CHECK(e[1].message.find("unknown setting 'colour'") != std::string::npos);
  }
  SUBCASE("a wrong combination is blamed on every field whose default would fix it") {
    const auto e = errors_of(tiny({{"task", "mean"}, {"reparam", "log"}}));
    REQUIRE(e.size() == 2);
    CHECK(e[0].field == "task");
    CHECK(e[1].field == "reparam");
    // In the page's words: the field to change, not the CLI's flag.
    CHECK(e[1].message.find("with reparam_shift, e.g. reparam_shift 1") != std::string::npos);
  }
  SUBCASE("a value valid only with another is not blamed when that other is given") {
    CHECK(errors_of({{"l_train", 60}, {"l_test", 100}}).empty());
    const auto e = errors_of({{"l_train", 60}});  // the page's l_test is 40
    REQUIRE(e.size() == 1);
    CHECK(e[0].field == "l_train");
    CHECK(e[0].message.find("l_test (40) must be at least l_train (60)") != std::string::npos);
  }
  SUBCASE("two separate mistakes: each field its own message") {
    const auto e = errors_of(tiny({{"pe", "rotary"}, {"reparam", "sqrt(x"}}));
    REQUIRE(e.size() == 2);
    CHECK(e[0].field == "pe");
    CHECK(e[0].message.find("rotary") != std::string::npos);
    CHECK(e[1].field == "reparam");
  }
  SUBCASE("work past the server's budget is refused, naming the limit") {
    Budget budget;
    budget.max_time = "60s";  // the page's defaults fit it
    const auto e = check_page_settings({{"steps", 1000000}}, budget, false).errors;
    REQUIRE(e.size() == 1);
    CHECK(e[0].field == "steps");
    CHECK(e[0].message.find("--max-time") != std::string::npos);
  }
  SUBCASE("threads stay 1: runs share the machine") {
    CHECK(errors_of(tiny({{"threads", 1}})).empty());
    const auto e = errors_of(tiny({{"threads", 8}}));
    REQUIRE(e.size() == 1);
    CHECK(e[0].field == "threads");
    CHECK(e[0].message.find("--max-running") != std::string::npos);
  }
  SUBCASE("not an object") {
    const auto e = errors_of(PageJson::array({1, 2}));
    REQUIRE(e.size() == 1);
    CHECK(e[0].field.empty());
  }
}

TEST_CASE("the page's options list every task, PE and built-in, and defaults that check clean") {
  const PageJson o = page_options(2);
  CHECK(o["max_running"] == 2);
  CHECK(o["tasks"].size() == task_names().size());
  // Every encoding that trains without a setting of its own (bias needs its expression).
  std::vector<std::string> pes;
  for (const PositionalEncodingInfo& info : positional_encodings())
    if (!info.needs_setting) pes.push_back(info.name);
  CHECK(o["pes"] == PageJson(pes));
  CHECK(pes.size() + 1 == positional_encoding_names().size());
  CHECK(o["defaults"]["steps"] == page_base_spec().steps);
  CHECK(errors_of(o["defaults"]).empty());
  // Every method's settings are real settings of the right type.
  for (const PageJson& m : o["methods"]) {
    INFO("method " << m["name"].get<std::string>());
    for (const auto& item : m["settings"].items()) CHECK(o["defaults"].contains(item.key()));
  }
}

TEST_CASE("the run queue trains in order, says each waiting run's place, and shows results") {
  TempDir dir;
  RunQueueOptions o;
  o.out = dir.path;
  RunQueue q(o);
  const int a = q.submit(check_page_settings(tiny({{"steps", 300}}), {}, false).spec);
  const int b = q.submit(check_page_settings(tiny({{"pe", "rope"}}), {}, false).spec);
  const int c = q.submit(check_page_settings(tiny({{"pe", "alibi"}}), {}, false).spec);
  CHECK(std::vector<int>{a, b, c} == std::vector<int>{1, 2, 3});
  // Once the first has started (it trains for a while), the others wait behind it, in order.
  while ((*q.run_json(a))["state"] == "queued")
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const PageJson rb = *q.run_json(b), rc = *q.run_json(c);
  if ((*q.run_json(a))["state"] != "completed") {  // else the machine was too fast to see it
    CHECK(rb["state"] == "queued");
    CHECK(rb["queue_position"] == 1);
    CHECK(rc["queue_position"] == 2);
  }
  // The same settings again are the same run.
  CHECK(q.submit(check_page_settings(tiny({{"pe", "rope"}}), {}, false).spec) == b);
  q.wait_until_idle();
  for (int n : {a, b, c}) {
    const PageJson run = *q.run_json(n);
    CHECK(run["state"] == "completed");
    CHECK(run["progress"] == doctest::Approx(1.0));
    CHECK(run["metric"] == "mse");
    REQUIRE(run["results"].size() == 6);
    CHECK(run["results"][5]["length"] == 6);
    CHECK(!run.contains("queue_position"));
    // The page's curve is the run's results.csv.
    const auto folder = q.finished_folder(n);
    REQUIRE(folder);
    const std::vector<LengthResult> saved = load_results(*folder);
    CHECK(run["results"][2]["value"].get<double>() == doctest::Approx(saved[2].mse).epsilon(1e-6));
  }
  CHECK(!q.run_json(4));
  CHECK(!q.finished_folder(0));

  SUBCASE("the folder is an experiment lenlab plot draws, its lines these runs") {
    const ExperimentConfig config = load_experiment_config((dir.path / "config.toml").string());
    std::vector<std::string> ids;
    for (const PlannedRun& r : plan_runs(config, {}, {1})) ids.push_back(r.id);
    CHECK(ids.size() == 3);
    for (int n : {a, b, c})
      CHECK(std::find(ids.begin(), ids.end(), (*q.run_json(n))["id"].get<std::string>()) !=
            ids.end());
    const CliResult plot = run_cli({"plot", dir.path.string()});
    CHECK(plot.rc == 0);
    CHECK(fs::exists(dir.path / "report.html"));
    CHECK(read_text(dir.path / "figlength.csv").find("#2 length · rope") != std::string::npos);
  }
  SUBCASE("a new session reads finished runs back instead of training them again") {
    RunQueue again(o);
    const int n = again.submit(check_page_settings(tiny({{"pe", "alibi"}}), {}, false).spec);
    const PageJson run = *again.run_json(n);
    CHECK(run["state"] == "completed");
    CHECK(run["results"].size() == 6);
  }
}

TEST_CASE("the run queue refuses runs past max_queued with a message naming the flag") {
  TempDir dir;
  RunQueueOptions o;
  o.out = dir.path;
  o.max_queued = 1;
  RunQueue q(o);
  q.submit(check_page_settings(tiny({{"steps", 300}}), {}, false).spec);
  // With one waiting run allowed, the third submission at the latest is one too many, unless the
  // first run (300 steps) finished within microseconds.
  try {
    q.submit(check_page_settings(tiny({{"seed", 2}}), {}, false).spec);
    q.submit(check_page_settings(tiny({{"seed", 3}}), {}, false).spec);
    FAIL("three runs fitted a queue of one");
  } catch (const QueueFull& e) {
    CHECK(std::string(e.what()).find("--max-queued 1") != std::string::npos);
  }
}

TEST_CASE("the HTTP API: options, a refused run with its field, a run polled to the end, its CSV") {
  TempDir dir;
  ServeOptions o;
  o.port = 0;
  o.queue.out = dir.path;
  PageServer server(o);
  const int port = server.bind();
  std::thread listening([&] { server.listen(); });
  struct StopAtEnd {  // also when a REQUIRE fails
    PageServer& server;
    std::thread& thread;
    ~StopAtEnd() {
      server.stop();
      thread.join();
    }
  } stop_at_end{server, listening};
  httplib::Client http("127.0.0.1", port);

  const auto page = http.Get("/");
  REQUIRE(page);
  CHECK(page->status == 200);
  CHECK(page->body.find("<html") != std::string::npos);
  const auto uplot = http.Get("/uPlot.iife.min.js");
  REQUIRE(uplot);
  CHECK(uplot->body.size() > 10000);

  const auto options = http.Get("/api/options");
  REQUIRE(options);
  CHECK(PageJson::parse(options->body)["tasks"][0] == "mean");

  const auto bad = http.Post("/api/runs", tiny({{"reparam", "sqrt(x"}}).dump(), "application/json");
  REQUIRE(bad);
  CHECK(bad->status == 400);
  const PageJson errors = PageJson::parse(bad->body)["errors"];
  REQUIRE(errors.size() == 1);
  CHECK(errors[0]["field"] == "reparam");
  const auto junk = http.Post("/api/runs", "{task:", "application/json");
  REQUIRE(junk);
  CHECK(junk->status == 400);
  CHECK(PageJson::parse(junk->body)["errors"][0]["field"].is_null());

  const auto ok = http.Post("/api/runs", tiny().dump(), "application/json");
  REQUIRE(ok);
  REQUIRE(ok->status == 200);
  const int number = PageJson::parse(ok->body)["number"];
  const auto early_csv = http.Get("/api/runs/" + std::to_string(number) + "/results.csv");
  REQUIRE(early_csv);
  if ((*server.queue().run_json(number))["state"] != "completed") CHECK(early_csv->status == 404);
  const PageJson done = wait_finished(server.queue(), number);
  CHECK(done["state"] == "completed");
  const auto polled = http.Get("/api/runs/" + std::to_string(number));
  REQUIRE(polled);
  CHECK(PageJson::parse(polled->body)["results"].size() == 6);
  const auto csv = http.Get("/api/runs/" + std::to_string(number) + "/results.csv");
  REQUIRE(csv);
  CHECK(csv->status == 200);
  CHECK(csv->body.rfind("length,mse,", 0) == 0);
  CHECK(http.Get("/api/runs/99")->status == 404);
  CHECK(PageJson::parse(http.Get("/api/runs")->body)["runs"].size() == 1);
}

TEST_CASE("lenlab serve refuses a port it cannot bind, before writing anything") {
  TempDir dir;
  ServeOptions o;
  o.port = 0;
  o.queue.out = dir.path / "a";
  PageServer first(o);
  const int port = first.bind();
  const CliResult r =
      run_cli({"serve", "--port", std::to_string(port), "--out", (dir.path / "b").string()});
  CHECK(r.rc == 2);
  CHECK(r.err.find(std::to_string(port)) != std::string::npos);
  CHECK(r.err.find("--port") != std::string::npos);
  CHECK(!fs::exists(dir.path / "b"));
}

TEST_CASE("lenlab serve --help lists every flag with its default") {
  const CliResult help = run_cli({"serve", "--help"});
  CHECK(help.rc == 0);
  for (const char* flag :
       {"--host TEXT=127.0.0.1", "--port INT=8080", "--out TEXT=served", "--max-running INT=1",
        "--max-queued INT=64", "--device TEXT:{auto,cpu,cuda}=auto", "--max-time TEXT=10m",
        "--max-memory TEXT", "--corpus TEXT ...", "--allow-host TEXT ...",
        "--allow-origin TEXT ..."}) {
    INFO("flag " << flag);
    CHECK(help.out.find(flag) != std::string::npos);
  }
}
