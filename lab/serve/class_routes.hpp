#pragma once
// The classroom's part of the live page's API (lab/serve/classroom.hpp says who is who):
//   GET    /api/session          {"classroom", "role", "name", "runs_per_student", "queue_open"}
//                                (and "students" for the teacher); answered without a session
//   POST   /api/join             {"code", "name"} → the session cookie; 400, 403, 409 or 429
//   DELETE /api/runs/N           cancels run N: the teacher (or the local user) any run, a student
//                                a run only they submitted; 403 otherwise, 404 for a run not seen
//   POST   /api/queue            {"open": true or false}: the teacher (or local user) closes or
//                                opens the queue; 403 otherwise
//   GET    /api/results.csv      the finished runs' curves in long form (RunQueue::results_csv):
//                                a student's own; the teacher's all, or ?student=NAME's
#include <nlohmann/json.hpp>

#include "lab/serve/classroom.hpp"
#include "lab/serve/run_queue.hpp"

// Last among the includes: it includes <resolv.h>, whose `_res` macro breaks Eigen headers.
#include "lab/serve/guarded_http.hpp"

namespace lenlab {

// Who sent the request (its Cookie header's session).
Member request_member(const Classroom& classroom, const httplib::Request& req);

// Whether `m` may see a run as RunQueue::run_json gives it (its "owners").
bool sees_run(const Member& m, const nlohmann::ordered_json& run);

// The owner a member's runs are submitted as: the student's name, "teacher", "" (local user).
inline const std::string& run_owner(const Member& m) {
  return m.name;
}

void add_class_routes(httplib::Server& http, Classroom& classroom, RunQueue& queue);

}  // namespace lenlab
