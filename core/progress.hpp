#pragma once
// Progress of a long loop (training steps, evaluation batches) for a person watching a terminal,
// or a log file that should stay readable: a terminal gets one self-redrawing line, anything else
// gets a plain line per 10% so logs neither flood nor carry '\r' and escape codes.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace lenlab {

// A bar that counts work rather than steps or lengths (estimated FLOPs, cost/run_cost.hpp, so that
// its ETA weighs a long test length or run as the work it is) counts it in units of this many.
inline constexpr double kFlopsPerProgressUnit = 1e6;

class Progress {
 public:
  // Seconds since an arbitrary fixed origin. Injectable so tests do not depend on real time.
  using Clock = std::function<double()>;

  // `total` units of work. On a terminal (is_tty): one line redrawn with '\r' at most ~10 times a
  // second: label, a bar, done/total, rate (units/s), ETA and the caller's status text. Not a
  // terminal: a plain line each time another 10% is done, and at the end.
  Progress(std::string label, int64_t total, std::ostream& out, bool is_tty);
  Progress(std::string label, int64_t total, std::ostream& out, bool is_tty, Clock now_seconds);

  // Off: the line shows the fraction done and the ETA but not done/total and the rate, for units
  // that mean nothing to a reader (work weighted by its cost, so that the ETA is right).
  void show_counts(bool on) { show_counts_ = on; }

  // `done` units finished so far; `status` e.g. "loss 1.23e-03". An empty `status` keeps the last
  // one given, so a loop can refresh the count every step and the loss only now and then.
  void update(int64_t done, std::string_view status = {});

  // The final line (on a terminal: newline-terminated). Idempotent. Off a terminal it adds no line
  // when the last one already reported the same count and status (so 100 updates + finish give
  // exactly 10 lines). An empty `status` keeps the last one given.
  void finish(std::string_view status = {});

  // isatty(fileno(f)).
  static bool stream_is_tty(FILE* f);

 private:
  std::string render(bool for_tty, bool final) const;
  void draw_tty(bool final);
  void print_line(bool final);

  std::string label_;
  int64_t total_;
  std::ostream& out_;
  bool is_tty_;
  Clock now_;
  double start_ = 0;
  int64_t done_ = 0;
  std::string status_;
  double last_draw_ = 0;
  bool drawn_ = false;
  size_t last_width_ = 0;      // Terminal: length of the line on screen, to blank its leftovers.
  int last_decile_ = 0;        // Off a terminal: the last 10% step printed.
  int64_t printed_done_ = -1;  // Off a terminal: what the last printed line reported.
  std::string printed_status_;
  bool finished_ = false;
  bool show_counts_ = true;
};

// "12s", "3m05s", "1h02m", "--" for unknown (negative, NaN, infinite).
std::string format_duration(double seconds);
// "0.50/s", "12.3/s", "456/s", "12.3k/s", "4.56M/s".
std::string format_rate(double per_second);

}  // namespace lenlab
