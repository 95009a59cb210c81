#include "lab/serve/classroom.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <random>

#include "core/ascii_case.hpp"
#include "core/error.hpp"

namespace lenlab {

using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

namespace {

// Letters and digits a projector shows unambiguously (no 0/O, 1/I/L).
constexpr std::string_view kCodeLetters = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
constexpr int kMaxWrongCodes = 10;  // per client address and minute
constexpr auto kLockout = std::chrono::minutes(1);
constexpr size_t kMaxName = 32;
// Bounds on what clients make the server remember: sessions (a class, its re-joins and the
// teacher's browsers) and the addresses with wrong codes being counted.
constexpr size_t kMaxSessions = 2000;
constexpr size_t kMaxCountedAddresses = 10000;

std::string random_text(std::string_view alphabet, int length) {
  std::random_device device;  // the kernel's entropy: codes and sessions must not be predictable
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
  std::string out;
  for (int i = 0; i < length; ++i) out += alphabet[pick(device)];
  return out;
}

// Compares in time that does not depend on where the texts first differ.
bool same_code(const std::string& given, const std::string& code) {
  unsigned char diff = given.size() == code.size() ? 0 : 1;
  for (size_t i = 0; i < code.size(); ++i)
    diff |= static_cast<unsigned char>(code[i] ^ (i < given.size() ? given[i] : 0));
  return diff == 0;
}

std::string checked_code(const std::string& code, const char* flag) {
  const bool ok =
      code.size() >= 4 && code.size() <= 64 &&
      std::all_of(code.begin(), code.end(), [](unsigned char c) { return std::isalnum(c) != 0; });
  if (!ok)
    throw UsageError(fmt::format("{} '{}' is not a code: give 4 to 64 letters and digits", flag,
                                 code.size() > 80 ? code.substr(0, 80) + "…" : code));
  return ascii_upper(code);  // typed by students in either case
}

// A name as shown beside its runs: 1–32 bytes of letters (any script), digits, spaces and . - _ ',
// trimmed. nullopt when it is none.
std::optional<std::string> checked_name(std::string name) {
  while (!name.empty() && name.back() == ' ') name.pop_back();
  while (!name.empty() && name.front() == ' ') name.erase(0, 1);
  if (name.empty() || name.size() > kMaxName) return std::nullopt;
  // Not a spreadsheet formula's first character (the per-student CSV's first column).
  if (const unsigned char first = name.front(); first < 0x80 && !std::isalnum(first))
    return std::nullopt;
  for (const unsigned char c : name)
    if (!(c >= 0x80 || std::isalnum(c) || c == ' ' || c == '.' || c == '-' || c == '_' ||
          c == '\''))
      return std::nullopt;
  return name;
}

// The value of cookie `name` in a Cookie header ("a=1; b=2").
std::optional<std::string> cookie_value(const std::string& header, const std::string& name) {
  size_t at = 0;
  while (at < header.size()) {
    const size_t end = std::min(header.find(';', at), header.size());
    std::string pair = header.substr(at, end - at);
    while (!pair.empty() && pair.front() == ' ') pair.erase(0, 1);
    if (pair.rfind(name + "=", 0) == 0) return pair.substr(name.size() + 1);
    at = end + 1;
  }
  return std::nullopt;
}

}  // namespace

const char* role_name(Role role) {
  switch (role) {
    case Role::kLocal:
      return "local";
    case Role::kStudent:
      return "student";
    case Role::kTeacher:
      return "teacher";
    case Role::kNobody:
      break;
  }
  return "";
}

Classroom::Classroom(ClassroomOptions options)
    : options_(std::move(options)), cookie_name_("lenlab_session") {
  if (!options_.enabled) return;
  options_.join_code = options_.join_code.empty() ? random_text(kCodeLetters, 6)
                                                  : checked_code(options_.join_code, "--join-code");
  options_.teacher_code = options_.teacher_code.empty()
                              ? random_text(kCodeLetters, 12)
                              : checked_code(options_.teacher_code, "--teacher-code");
  if (options_.join_code == options_.teacher_code)
    throw UsageError(
        "--join-code and --teacher-code are the same: the teacher's must differ, or "
        "every student could cancel runs and close the queue");
  if (options_.runs_per_student < 1)
    throw UsageError(
        fmt::format("--runs-per-student {} must be at least 1", options_.runs_per_student));
}

void Classroom::bound_to(int port) {
  cookie_name_ = fmt::format("lenlab_session_{}", port);
}

Member Classroom::member(const std::optional<std::string>& cookie_header) const {
  if (!options_.enabled) return {Role::kLocal, ""};
  if (!cookie_header) return {};
  const auto token = cookie_value(*cookie_header, cookie_name_);
  if (!token) return {};
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = sessions_.find(*token);
  return it == sessions_.end() ? Member{} : it->second;
}

bool Classroom::locked_out(const std::string& address, Clock::time_point now) {
  if (attempts_.size() >= kMaxCountedAddresses)  // forget the addresses whose minute is over
    for (auto it = attempts_.begin(); it != attempts_.end();)
      it = now - it->second.first > kLockout ? attempts_.erase(it) : std::next(it);
  const auto it = attempts_.find(address);
  if (it == attempts_.end()) return false;
  if (now - it->second.first > kLockout) {
    attempts_.erase(it);
    return false;
  }
  return it->second.failed >= kMaxWrongCodes;
}

JoinAnswer Classroom::join(const Json& body, const std::string& address) {
  if (!options_.enabled)
    return {400,
            "",
            "this server has no classroom (it listens on loopback): no code is needed",
            {},
            ""};
  const auto text = [&](const char* key) -> std::optional<std::string> {
    if (!body.is_object() || !body.contains(key) || !body[key].is_string()) return std::nullopt;
    return body[key].get<std::string>();
  };
  const auto code = text("code");
  if (!code || code->empty())
    return {400, "code", "give the class's join code (the teacher shows it)", {}, ""};
  const Clock::time_point now = Clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  if (locked_out(address, now))
    return {429,
            "code",
            fmt::format("{} wrong codes from this computer within a minute: wait a minute, then "
                        "ask the teacher for the code",
                        kMaxWrongCodes),
            {},
            ""};
  Member member;
  const std::string given = ascii_upper(*code);
  // The teacher gets in whatever the students did; the rest of the class within the bounds.
  const bool full = sessions_.size() >= kMaxSessions || attempts_.size() >= kMaxCountedAddresses;
  if (same_code(given, options_.teacher_code)) {
    member = {Role::kTeacher, "teacher"};
  } else if (full) {
    return {429, "", "the class is full (too many joins or wrong codes): ask the teacher", {}, ""};
  } else if (same_code(given, options_.join_code)) {
    const auto name = checked_name(text("name").value_or(""));
    if (!name)
      return {400,
              "name",
              fmt::format("give a name of 1 to {} letters, digits, spaces or . - _ ', starting "
                          "with a letter or digit (it is shown beside your runs)",
                          kMaxName),
              {},
              ""};
    if (ascii_lower(*name) == "teacher" || names_.count(ascii_lower(*name)))
      return {409,
              "name",
              fmt::format("the name '{}' is taken in this class: choose another", *name),
              {},
              ""};
    names_[ascii_lower(*name)] = *name;
    joined_.push_back(*name);
    member = {Role::kStudent, *name};
  } else {
    Attempts& a = attempts_[address];
    if (a.failed == 0) a.first = now;
    ++a.failed;
    return {403, "code", "that is not this class's code: check it with the teacher", {}, ""};
  }
  const std::string token = random_text("0123456789abcdef", 32);  // 128 bits
  sessions_[token] = member;
  return {
      200, "", "", member,
      fmt::format("{}={}; Path=/; HttpOnly; SameSite=Strict; Max-Age=43200", cookie_name_, token)};
}

Json Classroom::session_json(const Member& m) const {
  Json j = {{"classroom", options_.enabled},
            {"role", m.role == Role::kNobody ? Json(nullptr) : Json(role_name(m.role))},
            {"name", m.name}};
  if (options_.enabled) j["runs_per_student"] = options_.runs_per_student;
  return j;
}

std::vector<std::string> Classroom::students() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return joined_;
}

}  // namespace lenlab
