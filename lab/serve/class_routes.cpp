#include "lab/serve/class_routes.hpp"

#include <fmt/format.h>

#include <cctype>

#include "lab/serve/json_reply.hpp"

namespace lenlab {

using Json = nlohmann::ordered_json;

Member request_member(const Classroom& classroom, const httplib::Request& req) {
  if (!req.has_header("Cookie")) return classroom.member(std::nullopt);
  return classroom.member(req.get_header_value("Cookie"));
}

bool sees_run(const Member& m, const Json& run) {
  if (m.runs_the_class()) return true;
  if (m.role != Role::kStudent) return false;
  for (const Json& owner : run.at("owners"))
    if (owner == m.name) return true;
  return false;
}

void add_class_routes(httplib::Server& http, Classroom& classroom, RunQueue& queue) {
  http.Get("/api/session", [&](const httplib::Request& req, httplib::Response& res) {
    const Member m = request_member(classroom, req);
    Json session = classroom.session_json(m);
    session["queue_open"] = queue.is_open();
    if (m.role == Role::kTeacher) session["students"] = classroom.students();
    send_json(res, 200, session);
  });
  http.Post("/api/join", [&](const httplib::Request& req, httplib::Response& res,
                             const httplib::ContentReader& read) {
    const auto body = json_body_or_refuse(req, res, read);
    if (!body) return;
    const JoinAnswer answer = classroom.join(*body, req.remote_addr);
    if (answer.status != 200) {
      send_error(res, answer.status, answer.message, answer.field);
      return;
    }
    res.set_header("Set-Cookie", answer.set_cookie);
    send_json(res, 200, {{"role", role_name(answer.member.role)}, {"name", answer.member.name}});
  });
  http.Delete(R"(/api/runs/(\d{1,9}))", [&](const httplib::Request& req, httplib::Response& res) {
    const Member m = request_member(classroom, req);
    const int number = std::stoi(req.matches[1]);
    const auto run = queue.run_json(number);
    if (!run || !sees_run(m, *run)) {
      send_error(res, 404, fmt::format("no run {}", number));
      return;
    }
    if (!m.runs_the_class() && run->at("owners") != Json::array({m.name})) {
      send_error(res, 403,
                 fmt::format("run {} was submitted by other students too: ask the teacher to "
                             "cancel it",
                             number));
      return;
    }
    const std::string by = m.role == Role::kLocal ? "the page" : m.name;
    if (const std::string why = queue.cancel(number, by); !why.empty()) {
      send_error(res, 409, why);
      return;
    }
    send_json(res, 200, *queue.run_json(number));
  });
  http.Post("/api/queue", [&](const httplib::Request& req, httplib::Response& res,
                              const httplib::ContentReader& read) {
    const auto body = json_body_or_refuse(req, res, read);
    if (!body) return;
    if (!request_member(classroom, req).runs_the_class()) {
      send_error(res, 403, "only the teacher can close or open the queue");
      return;
    }
    if (body->size() != 1 || !body->contains("open") || !(*body)["open"].is_boolean()) {
      send_error(res, 400, R"(give {"open": true} or {"open": false})", "open");
      return;
    }
    queue.set_open(body->at("open").get<bool>());
    send_json(res, 200, {{"queue_open", queue.is_open()}});
  });
  http.Get("/api/results.csv", [&](const httplib::Request& req, httplib::Response& res) {
    const Member m = request_member(classroom, req);
    std::optional<std::string> owner;
    if (!m.runs_the_class()) owner = m.name;
    if (req.has_param("student")) {
      const std::string asked = req.get_param_value("student");
      if (!m.runs_the_class() && asked != m.name) {
        send_error(res, 403, "a student downloads their own results only", "student");
        return;
      }
      owner = asked;
    }
    std::string file = owner && !owner->empty() ? "results-" + *owner : "results";
    for (char& c : file)  // a header's quoted file name: nothing a client could break out with
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = '_';
    res.set_header("Content-Disposition", fmt::format("attachment; filename=\"{}.csv\"", file));
    res.set_content(queue.results_csv(owner), "text/csv; charset=utf-8");
  });
}

}  // namespace lenlab
