#pragma once
// Who is who on the live page (`lenlab serve`). On loopback (127.0.0.1, the default) the page has
// one user, who may do everything, as before: no code. In a classroom (any other address, or
// --classroom):
//   - a browser joins once, POST /api/join {"code": JOIN_CODE, "name": "Ada"}, and gets a session
//     cookie (HttpOnly, SameSite=Strict, 12 h); its runs belong to that name, unique in the class;
//   - the teacher joins with the teacher code (its own, printed only on the teacher's terminal)
//     and sees everyone's runs, cancels any, closes or opens the queue;
//   - a request to /api/ without a valid session is refused (401), except the join and
//     GET /api/session;
//   - wrong codes are counted per client address: after 10 within a minute, that address may not
//     try again for the rest of the minute (429), so a 6-letter code (31⁶ ≈ 9·10⁸ choices) cannot
//     be guessed by trying;
//   - what clients make it remember is bounded: at most 2000 sessions and 10 000 addresses being
//     counted (past either, joins are refused with 429 until the counted minutes pass).
// Thread-safe: the server's threads call it concurrently.
#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace lenlab {

struct ClassroomOptions {
  bool enabled = false;      // off: every client is the one local user
  std::string join_code;     // "" with enabled: drawn at random (6 letters and digits)
  std::string teacher_code;  // "" with enabled: drawn at random (12)
  int runs_per_student = 2;  // queued or training at once, per student
};

enum class Role { kNobody, kStudent, kTeacher, kLocal };

struct Member {
  Role role = Role::kNobody;
  std::string name;  // a student's; "teacher"; "" for the local user
  // Sees (and downloads) every run, cancels any, closes and opens the queue.
  bool runs_the_class() const { return role == Role::kTeacher || role == Role::kLocal; }
};

// An answer of the join: the member and the Set-Cookie value, or a status and message.
struct JoinAnswer {
  int status = 200;   // 200; 400 (no code or a bad name), 403 (wrong code), 409 (name taken), 429
  std::string field;  // the request field at fault ("code", "name"), "" for none
  std::string message;
  Member member;
  std::string set_cookie;
};

class Classroom {
 public:
  // UsageError for a code that is not 4–64 letters and digits, the same code for both roles, or
  // runs_per_student below 1.
  explicit Classroom(ClassroomOptions options);
  // Once bound, before any request: the cookie's name carries the port, so that two servers on
  // one machine keep their sessions apart.
  void bound_to(int port);

  bool enabled() const { return options_.enabled; }
  const ClassroomOptions& options() const { return options_; }

  // The member behind a request's Cookie header (nullopt: none); kNobody when the session is not
  // known (a server restarted since, or no cookie), kLocal when the classroom is off.
  Member member(const std::optional<std::string>& cookie_header) const;

  // POST /api/join's body from the client at `address`.
  JoinAnswer join(const nlohmann::ordered_json& body, const std::string& address);

  // GET /api/session: {"classroom", "role": "local"/"student"/"teacher"/null, "name",
  // "runs_per_student"}.
  nlohmann::ordered_json session_json(const Member& m) const;

  // Which students have joined, in joining order.
  std::vector<std::string> students() const;

 private:
  struct Attempts {
    int failed = 0;
    std::chrono::steady_clock::time_point first;
  };
  bool locked_out(const std::string& address, std::chrono::steady_clock::time_point now);

  ClassroomOptions options_;
  std::string cookie_name_;
  mutable std::mutex mutex_;
  std::map<std::string, Member> sessions_;    // by token
  std::map<std::string, std::string> names_;  // lower-cased name → name as given
  std::vector<std::string> joined_;           // students, in order
  std::map<std::string, Attempts> attempts_;  // wrong codes by client address
};

const char* role_name(Role role);  // "local", "student", "teacher", "" for kNobody

}  // namespace lenlab
