// libFuzzer target: `lenlab serve`'s request path without sockets (lab/serve/server.cpp), for a
// server bound to 127.0.0.1:8080 with --allow-host lab.example.org and --allow-origin
// https://lab.example.org. The input is split at NUL bytes into five parts:
//   METHOD \0 Host \0 Origin \0 Content-Type \0 BODY
// (a part that is missing, or is the single byte 0x7f, is a header the request lacks; a missing
// method is POST; further NULs stay in the body). Then, as the server does:
//   - the pre-routing guard, refuse_request (lab/serve/request_guard.hpp): a refusal ends it;
//   - a POST: parse_page_request of the body (a UsageError: the 400 with its message), then
//     check_page_settings with the budget `lenlab serve` passes by default on a CPU machine and the
//     server-path rules of lab/serve/server_paths.hpp for a fixed server: corpora "tiny" (a
//     3.5 kB text file) and "missing" (a file that is not there), runs 1 (completed: an empty
//     folder), 2 (training), 3 (diverged); then the 400's body as the server builds it;
//   - the classroom (lab/serve/classroom.hpp) of a server with fixed codes: the Host part read as a
//     Cookie header (member), and a POST's parsed body as a join (POST /api/join) from one
//     address, whose answer must be a status the API documents, with a message when refused and
//     a cookie when not.
//
// The expected answers are a refusal, a parse error's reply, a list of field errors, or a spec.
// Anything else is a finding: a crash, a sanitizer report, an exception escaping (in the server,
// httplib turns it into a bare 500), a hang, unbounded memory, or a broken promise, checked here:
// a refusal is a 403 or 415 with a message; every field error has a message and names a field of
// the request (or none); a request with no error gives a spec that resolve() takes.
//
// Work cap (fuzz/page_request_cap.hpp; it skips work, never an input): a request whose checks
// would evaluate f at too many targets is not checked. Nothing is trained (no queue).
//
// Also replayed over fuzz/corpus/serve_request/ by the normal test suite (fuzz/replay_main.cpp).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "core/error.hpp"
#include "cost/budget.hpp"
#include "fuzz/page_request_cap.hpp"
#include "fuzz/scratch_folder.hpp"
#include "lab/serve/classroom.hpp"
#include "lab/serve/page_settings.hpp"
#include "lab/serve/request_guard.hpp"
#include "lab/serve/server_paths.hpp"
#include "train/run_settings.hpp"

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// Reports a broken promise and aborts, which libFuzzer records as a crash with this input.
[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_serve_request: %s\n", what.c_str());
  std::abort();
}

// The fixed server: its scratch folder (a corpus file, run 1's folder), removed at exit, and
// what it allows and offers.
struct Server {
  lenlab::fuzz::ScratchFolder scratch{"fuzz_serve_request"};
  const fs::path& dir = scratch.dir;
  lenlab::AllowedClients allowed;
  lenlab::ServerPaths paths;
  // Joins accumulate (names taken, wrong codes counted) as in a server that runs for a while.
  lenlab::Classroom classroom{lenlab::ClassroomOptions{true, "ABCD23", "TEACHER7CODE", 2}};
  Server() {
    std::ofstream tiny(dir / "tiny.txt");  // 3.5 kB: a text run of the page's defaults fits
    for (int i = 0; i < 64; ++i) tiny << "In the beginning was the word, and the word was short.\n";
    fs::create_directories(dir / "run1");
    allowed = lenlab::allowed_clients("127.0.0.1", 8080, {"lab.example.org"},
                                      {"https://lab.example.org"});
    const std::map<std::string, std::string> corpora = {
        {"tiny", (dir / "tiny.txt").string()}, {"missing", (dir / "missing.txt").string()}};
    const fs::path run1 = dir / "run1";
    paths = lenlab::page_server_paths(
        corpora,
        [run1](int number) -> lenlab::FinishedRun {
          if (number == 1) return {"completed", run1};
          if (number == 2) return {"training", {}};
          if (number == 3) return {"diverged", {}};
          return {"", {}};
        },
        [] { return 3; });
    classroom.bound_to(8080);
  }
};

void check_join(lenlab::Classroom& classroom, const std::string& body) {
  Json request;
  try {
    request = lenlab::parse_page_request(body);
  } catch (const lenlab::UsageError&) {
    return;  // the server answers 400 before the join
  }
  const lenlab::JoinAnswer answer = classroom.join(request, "192.0.2.7");
  const int s = answer.status;
  if (s != 200 && s != 400 && s != 403 && s != 409 && s != 429)
    finding("a join answered status " + std::to_string(s));
  if (s != 200 && answer.message.empty()) finding("a refused join without a message");
  if (s == 200 && (answer.set_cookie.empty() || answer.member.role == lenlab::Role::kNobody))
    finding("a join let in without a session");
  if (s == 200 && answer.member.role == lenlab::Role::kTeacher &&
      !(request.contains("code") && request["code"].is_string()))
    finding("a teacher without the teacher's code");
}

// The input's five parts (a missing one: nullopt).
std::vector<std::optional<std::string>> split_request(const std::string& text) {
  std::vector<std::optional<std::string>> parts;
  size_t start = 0;
  while (parts.size() < 4) {
    const size_t nul = text.find('\0', start);
    if (nul == std::string::npos) break;
    parts.push_back(text.substr(start, nul - start));
    start = nul + 1;
  }
  parts.push_back(text.substr(start));
  parts.resize(5);
  for (std::optional<std::string>& p : parts)
    if (p && *p == "\x7f") p.reset();
  return parts;
}

void check_settings(const lenlab::ServerPaths& paths, const std::string& body) {
  Json request;
  try {
    request = lenlab::parse_page_request(body);
  } catch (const lenlab::UsageError& e) {
    (void)lenlab::errors_json({{"", e.what()}}).dump();  // strict: the message must be UTF-8
    return;
  }
  if (!lenlab::fuzz::page_request_within_cap(request)) return;
  lenlab::Budget budget;  // as `lenlab serve` sets it by default (lab/cli/serve_command.cpp)
  budget.max_time = "10m";
  const lenlab::PageSettings checked =
      lenlab::check_page_settings(request, budget, /*gpu=*/false, paths);
  lenlab::fuzz::check_page_answer(request, checked, finding);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Server server;
  const std::vector<std::optional<std::string>> parts =
      split_request(std::string(reinterpret_cast<const char*>(data), size));
  const std::string method = parts[0].value_or("POST");
  const auto refusal = lenlab::refuse_request(server.allowed, method, parts[1], parts[2], parts[3]);
  if (refusal) {
    if (refusal->status != 403 && refusal->status != 415)
      finding("a refusal with status " + std::to_string(refusal->status));
    if (refusal->message.empty()) finding("a refusal without a message");
    return 0;
  }
  if (server.classroom.member(parts[1]).role != lenlab::Role::kNobody)
    finding("a Cookie header no join gave is a member");  // no session was handed out to it
  if (method == "POST") {
    check_settings(server.paths, parts[4].value_or(""));
    check_join(server.classroom, parts[4].value_or(""));
  }
  return 0;
}
