// `lenlab serve` as a classroom (lab/serve/classroom.hpp, lab/serve/class_routes.hpp), over real
// loopback sockets: a join code and a name per browser, runs that belong to their student, a limit
// per student and fair queueing between them, and a teacher who sees all, cancels any and closes
// the queue. The page's side is tested in Chromium (tests/browser/classroom_roles.mjs).
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "core/error.hpp"
#include "lab/serve/fair_queue.hpp"
#include "tests/support/serve_support.hpp"
#include "tests/support/test_support.hpp"

// Last: it includes <resolv.h>, whose `_res` macro breaks Eigen headers included after it.
#include "tests/lab/serve_test_support.hpp"

using namespace lenlab;
using namespace lenlab::test;

namespace {

constexpr const char* kJoin = "ABCD23";
constexpr const char* kTeacher = "TEACHER7CODE";

ServeOptions classroom_in(const TempDir& dir, int runs_per_student = 2) {
  ServeOptions o;
  o.queue.out = dir.path;
  o.classroom = {true, kJoin, kTeacher, runs_per_student};
  return o;
}

// One request on its own connection, with a session cookie ("" for none) and a JSON body.
std::string ask(int port, const std::string& method, const std::string& path,
                const std::string& cookie = "", const std::string& body = "") {
  std::string request =
      fmt::format("{} {} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n", method, path);
  if (!cookie.empty()) request += "Cookie: " + cookie + "\r\n";
  if (method == "POST")
    request += fmt::format("Content-Type: application/json\r\nContent-Length: {}\r\n", body.size());
  return round_trip(port, request + "\r\n" + body);
}

// Joins and returns the cookie ("lenlab_session_PORT=TOKEN"); "" when refused.
std::string join(int port, const std::string& code, const std::string& name = "") {
  const std::string answer =
      ask(port, "POST", "/api/join", "", PageJson{{"code", code}, {"name", name}}.dump());
  const size_t at = answer.find("Set-Cookie: ");
  if (status_of(answer) != 200 || at == std::string::npos) return "";
  const size_t from = at + 12;
  return answer.substr(from, answer.find(';', from) - from);
}

int submit(int port, const std::string& cookie, const PageJson& settings,
           PageJson* reply = nullptr) {
  const std::string answer = ask(port, "POST", "/api/runs", cookie, settings.dump());
  if (reply)
    *reply = status_of(answer) == 200 ? json_of(answer) : PageJson{{"error", message_of(answer)}};
  return status_of(answer);
}

std::vector<int> listed(int port, const std::string& cookie) {
  std::vector<int> numbers;
  const PageJson answer = json_of(ask(port, "GET", "/api/runs", cookie));  // outlives the loop
  for (const PageJson& run : answer["runs"]) numbers.push_back(run["number"]);
  return numbers;
}

// A run that trains long enough to be seen queued or training, and is then cancelled.
PageJson long_run(int seed) {
  return tiny({{"steps", 200000}, {"seed", seed}});
}

}  // namespace

TEST_CASE("fair_order starts each owner's next run before anyone's second") {
  // Ada queued three, then Bob one, then Cy one; Ada has one training already.
  const std::vector<QueuedRun> queued = {{2, "Ada"}, {3, "Ada"}, {4, "Ada"}, {5, "Bob"}, {6, "Cy"}};
  CHECK(fair_order(queued, {{"Ada", 1}}) == std::vector<int>{5, 6, 2, 3, 4});
  // Nobody has started anything: submission order among equals, then round by round.
  CHECK(fair_order(queued, {}) == std::vector<int>{2, 5, 6, 3, 4});
  CHECK(fair_order({}, {}).empty());
}

TEST_CASE("on loopback without --classroom there is one local user who needs no code") {
  TempDir dir;
  ServeOptions o;
  o.queue.out = dir.path;
  ServedPage page(o);
  const PageJson session = json_of(ask(page.port, "GET", "/api/session"));
  CHECK(session["classroom"] == false);
  CHECK(session["role"] == "local");
  CHECK(status_of(ask(page.port, "GET", "/api/runs")) == 200);
  CHECK(status_of(ask(page.port, "POST", "/api/join", "", R"({"code": "X"})")) == 400);
}

TEST_CASE("a classroom: the API needs a session, got with the join code and a unique name") {
  TempDir dir;
  ServedPage page(classroom_in(dir));
  // The page and the session's answer are open; the rest of the API is 401 with why.
  CHECK(status_of(ask(page.port, "GET", "/")) == 200);
  CHECK(json_of(ask(page.port, "GET", "/api/session"))["role"].is_null());
  for (const char* path : {"/api/runs", "/api/options", "/api/runs/1", "/api/results.csv"}) {
    const std::string answer = ask(page.port, "GET", path);
    INFO(path);
    CHECK(status_of(answer) == 401);
    CHECK(message_of(answer).find("join the class") != std::string::npos);
  }
  CHECK(status_of(ask(page.port, "POST", "/api/runs", "", tiny().dump())) == 401);
  CHECK(status_of(ask(page.port, "GET", "/api/runs", "lenlab_session_1=forged")) == 401);

  const auto refusal = [&](const PageJson& body) {
    return ask(page.port, "POST", "/api/join", "", body.dump());
  };
  CHECK(status_of(refusal({{"code", "WRONG1"}, {"name", "Ada"}})) == 403);
  const std::string no_name = refusal({{"code", kJoin}, {"name", "  "}});
  CHECK(status_of(no_name) == 400);
  CHECK(json_of(no_name)["errors"][0]["field"] == "name");
  CHECK(status_of(refusal({{"code", kJoin}, {"name", "=cmd()"}})) == 400);  // a formula
  CHECK(status_of(refusal({{"code", kJoin}, {"name", std::string(33, 'a')}})) == 400);

  const std::string ada = join(page.port, "abcd23", "Ada");  // either case
  REQUIRE(!ada.empty());
  CHECK(ada.rfind(fmt::format("lenlab_session_{}=", page.port), 0) == 0);
  const PageJson me = json_of(ask(page.port, "GET", "/api/session", ada));
  CHECK(me["role"] == "student");
  CHECK(me["name"] == "Ada");
  CHECK(me["runs_per_student"] == 2);
  const std::string taken = refusal({{"code", kJoin}, {"name", "ada"}});
  CHECK(status_of(taken) == 409);
  CHECK(message_of(taken).find("taken") != std::string::npos);
  CHECK(status_of(refusal({{"code", kJoin}, {"name", "Teacher"}})) == 409);
  CHECK(status_of(ask(page.port, "GET", "/api/runs", ada)) == 200);
}

TEST_CASE("ten wrong codes from one address lock it out for a minute, the right code too") {
  TempDir dir;
  ServedPage page(classroom_in(dir));
  for (int i = 0; i < 10; ++i) CHECK(join(page.port, fmt::format("GUESS{}", i), "Eve").empty());
  const std::string locked =
      ask(page.port, "POST", "/api/join", "", PageJson{{"code", kJoin}, {"name", "Eve"}}.dump());
  CHECK(status_of(locked) == 429);
  CHECK(message_of(locked).find("wait a minute") != std::string::npos);
}

TEST_CASE("runs belong to their student: others neither see, download, cancel nor fine-tune them") {
  TempDir dir;
  ServedPage page(classroom_in(dir));
  const std::string ada = join(page.port, kJoin, "Ada"), bob = join(page.port, kJoin, "Bob");
  const std::string teacher = join(page.port, kTeacher);
  REQUIRE((!ada.empty() && !bob.empty() && !teacher.empty()));
  CHECK(json_of(ask(page.port, "GET", "/api/session", teacher))["role"] == "teacher");

  PageJson reply;
  REQUIRE(submit(page.port, ada, tiny(), &reply) == 200);
  const int run = reply["number"];
  wait_finished(page.server.queue(), run);
  CHECK(json_of(ask(page.port, "GET", fmt::format("/api/runs/{}", run), ada))["owners"] ==
        PageJson::array({"Ada"}));
  CHECK(listed(page.port, ada) == std::vector<int>{run});
  CHECK(listed(page.port, bob).empty());
  CHECK(listed(page.port, teacher) == std::vector<int>{run});
  for (const std::string& path :
       {fmt::format("/api/runs/{}", run), fmt::format("/api/runs/{}/results.csv", run)})
    CHECK(status_of(ask(page.port, "GET", path, bob)) == 404);
  CHECK(status_of(ask(page.port, "DELETE", fmt::format("/api/runs/{}", run), bob)) == 404);
  // Bob cannot fine-tune from Ada's run: to him it does not exist.
  const std::string parent =
      ask(page.port, "POST", "/api/runs", bob, tiny({{"init_from", run}}).dump());
  CHECK(status_of(parent) == 400);
  CHECK(json_of(parent)["errors"][0]["field"] == "init_from");

  // Per-student results: Ada's rows name her; Bob's file is empty but for its header; a student
  // may not ask for another's; the teacher gets anyone's.
  const std::string mine = body_of(ask(page.port, "GET", "/api/results.csv", ada));
  CHECK(mine.rfind("student,run,id,label,metric,l_train,length,value\n", 0) == 0);
  CHECK(mine.find("\n\"Ada\",1,") != std::string::npos);
  CHECK(std::count(mine.begin(), mine.end(), '\n') == 1 + 6);  // lengths 1..l_test = 6
  const std::string his = body_of(ask(page.port, "GET", "/api/results.csv", bob));
  CHECK(std::count(his.begin(), his.end(), '\n') == 1);
  CHECK(status_of(ask(page.port, "GET", "/api/results.csv?student=Ada", bob)) == 403);
  CHECK(body_of(ask(page.port, "GET", "/api/results.csv?student=Ada", teacher)) == mine);

  // The same settings from Bob: the same run, now his too.
  REQUIRE(submit(page.port, bob, tiny(), &reply) == 200);
  CHECK(reply["number"] == run);
  CHECK(listed(page.port, bob) == std::vector<int>{run});
}

TEST_CASE("a student may have runs_per_student runs waiting, and students are served in turn") {
  TempDir dir;
  ServedPage page(classroom_in(dir, 2));
  const std::string ada = join(page.port, kJoin, "Ada"), bob = join(page.port, kJoin, "Bob");
  const std::string teacher = join(page.port, kTeacher);
  PageJson a1, a2, a3, b1;
  REQUIRE(submit(page.port, ada, long_run(1), &a1) == 200);
  // Ada's first trains (one worker); her second waits.
  for (int i = 0; i < 500 && page.server.queue().run_json(a1["number"])->at("state") == "queued";
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(submit(page.port, ada, long_run(2), &a2) == 200);
  CHECK(a2["queue_position"] == 1);
  const int limited = submit(page.port, ada, long_run(3), &a3);
  CHECK(limited == 429);
  CHECK(a3["error"].get<std::string>().find("--runs-per-student 2") != std::string::npos);
  // Bob's first goes before Ada's second.
  REQUIRE(submit(page.port, bob, long_run(4), &b1) == 200);
  CHECK(b1["queue_position"] == 1);
  CHECK(page.server.queue().run_json(a2["number"])->at("queue_position") == 2);

  // Students cancel their own, not another's; the teacher any, queued or training.
  CHECK(status_of(ask(page.port, "DELETE", fmt::format("/api/runs/{}", b1["number"].get<int>()),
                      ada)) == 404);
  const std::string own =
      ask(page.port, "DELETE", fmt::format("/api/runs/{}", a2["number"].get<int>()), ada);
  CHECK(status_of(own) == 200);
  CHECK(json_of(own)["state"] == "cancelled");
  CHECK(json_of(own)["message"] == "cancelled by Ada");
  for (const PageJson* run : {&a1, &b1})
    CHECK(status_of(ask(page.port, "DELETE",
                        fmt::format("/api/runs/{}", (*run)["number"].get<int>()), teacher)) == 200);
  const PageJson training = wait_finished(page.server.queue(), a1["number"]);
  CHECK(training["state"] == "cancelled");
  CHECK(training["message"] == "cancelled by teacher");
  CHECK(training["progress"].get<double>() < 0.5);
  // Cancelled runs no longer count against Ada's limit, and the same settings train anew.
  page.server.queue().wait_until_idle();
  REQUIRE(submit(page.port, ada, long_run(2), &a3) == 200);
  CHECK(a3["number"].get<int>() > b1["number"].get<int>());
  CHECK(status_of(ask(page.port, "DELETE", fmt::format("/api/runs/{}", a3["number"].get<int>()),
                      ada)) == 200);
  page.server.queue().wait_until_idle();
}

TEST_CASE("the teacher closes and opens the queue, a student cannot") {
  TempDir dir;
  ServedPage page(classroom_in(dir));
  const std::string ada = join(page.port, kJoin, "Ada"), teacher = join(page.port, kTeacher);
  const std::string refused = ask(page.port, "POST", "/api/queue", ada, R"({"open": false})");
  CHECK(status_of(refused) == 403);
  CHECK(message_of(refused).find("only the teacher") != std::string::npos);
  CHECK(status_of(ask(page.port, "POST", "/api/queue", teacher, R"({"open": "no"})")) == 400);
  CHECK(json_of(ask(page.port, "POST", "/api/queue", teacher,
                    R"({"open": false})"))["queue_open"] == false);
  PageJson reply;
  CHECK(submit(page.port, ada, tiny(), &reply) == 503);
  CHECK(reply["error"].get<std::string>().find("closed the queue") != std::string::npos);
  CHECK(json_of(ask(page.port, "GET", "/api/runs", ada))["queue_open"] == false);
  CHECK(status_of(ask(page.port, "POST", "/api/queue", teacher, R"({"open": true})")) == 200);
  CHECK(submit(page.port, ada, tiny(), &reply) == 200);
  page.server.queue().wait_until_idle();
}

TEST_CASE("classroom codes are checked when the server starts") {
  TempDir dir;
  ServeOptions o = classroom_in(dir);
  o.classroom.join_code = "AB";
  CHECK_THROWS_WITH_AS(Classroom(o.classroom), doctest::Contains("--join-code 'AB'"), UsageError);
  o.classroom.join_code = "same1";
  o.classroom.teacher_code = "SAME1";
  CHECK_THROWS_WITH_AS(Classroom(o.classroom), doctest::Contains("are the same"), UsageError);
  // Left empty: drawn, 6 and 12 letters, different.
  const Classroom drawn(ClassroomOptions{true, "", "", 2});
  CHECK(drawn.options().join_code.size() == 6);
  CHECK(drawn.options().teacher_code.size() == 12);
}

TEST_CASE("what clients make the classroom remember is bounded, and the teacher still gets in") {
  Classroom room(ClassroomOptions{true, kJoin, kTeacher, 2});
  const auto join_as = [&](const std::string& code, const std::string& name,
                           const std::string& address) {
    return room.join(PageJson{{"code", code}, {"name", name}}, address).status;
  };
  for (int i = 0; i < 2000; ++i) REQUIRE(join_as(kJoin, fmt::format("s{}", i), "10.0.0.1") == 200);
  const JoinAnswer full = room.join(PageJson{{"code", kJoin}, {"name", "late"}}, "10.0.0.1");
  CHECK(full.status == 429);
  CHECK(full.message.find("the class is full") != std::string::npos);
  CHECK(join_as(kTeacher, "", "10.0.0.1") == 200);

  // Wrong codes from 10 000 addresses: counted, then no more joins until their minute passes.
  Classroom guessed(ClassroomOptions{true, kJoin, kTeacher, 2});
  for (int i = 0; i < 10000; ++i)
    REQUIRE(guessed.join(PageJson{{"code", "WRONG1"}}, fmt::format("10.1.{}.{}", i / 256, i % 256))
                .status == 403);
  CHECK(guessed.join(PageJson{{"code", kJoin}, {"name", "Ada"}}, "10.2.0.1").status == 429);
  CHECK(guessed.join(PageJson{{"code", kTeacher}}, "10.2.0.1").status == 200);
}
