#include "core/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include <fmt/format.h>

namespace lenlab {

namespace {

constexpr double kRedrawInterval = 0.1;  // seconds: ~10 redraws a second is smooth and cheap
constexpr int kBarWidth = 20;

double steady_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--";
  if (seconds < 60) return fmt::format("{:.0f}s", std::floor(seconds));
  const auto s = static_cast<int64_t>(seconds);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s / 60) % 60);
}

std::string format_rate(double per_second) {
  if (!std::isfinite(per_second) || per_second < 0) return "--/s";
  // Three significant digits at every scale.
  auto three = [](double v) {
    if (v < 10) return fmt::format("{:.2f}", v);
    if (v < 100) return fmt::format("{:.1f}", v);
    return fmt::format("{:.0f}", v);
  };
  if (per_second < 1e3) return three(per_second) + "/s";
  if (per_second < 1e6) return three(per_second / 1e3) + "k/s";
  if (per_second < 1e9) return three(per_second / 1e6) + "M/s";
  return three(per_second / 1e9) + "G/s";
}

Progress::Progress(std::string label, int64_t total, std::ostream& out, bool is_tty)
    : Progress(std::move(label), total, out, is_tty, steady_seconds) {}

Progress::Progress(std::string label, int64_t total, std::ostream& out, bool is_tty,
                   Clock now_seconds)
    : label_(std::move(label)),
      total_(std::max<int64_t>(total, 0)),
      out_(out),
      is_tty_(is_tty),
      now_(std::move(now_seconds)),
      start_(now_()) {}

bool Progress::stream_is_tty(FILE* f) {
  return f != nullptr && ::isatty(::fileno(f)) == 1;
}

void Progress::update(int64_t done, std::string_view status) {
  if (finished_) return;
  done_ = std::clamp<int64_t>(done, 0, total_);
  if (!status.empty()) status_ = status;
  if (is_tty_) {
    // The last unit is always drawn so the line never stops short of done == total.
    const double now = now_();
    if (!drawn_ || now - last_draw_ >= kRedrawInterval || done_ == total_) draw_tty(false);
    return;
  }
  // total_ fits in 60 bits for any real loop, so done * 10 cannot overflow.
  const int decile = total_ > 0 ? static_cast<int>(done_ * 10 / total_) : 0;
  if (decile > last_decile_) {
    last_decile_ = decile;
    print_line(false);
  }
}

void Progress::finish(std::string_view status) {
  if (finished_) return;
  if (!status.empty()) status_ = status;
  if (is_tty_) {
    draw_tty(true);
    out_ << '\n';
  } else if (printed_done_ != done_ || printed_status_ != status_) {
    print_line(true);
  }
  out_.flush();
  finished_ = true;
}

std::string Progress::render(bool for_tty, bool final) const {
  const double elapsed = now_() - start_;
  const double rate = elapsed > 0 ? static_cast<double>(done_) / elapsed : NAN;
  const double fraction = total_ > 0 ? static_cast<double>(done_) / static_cast<double>(total_) : 1;

  std::string line = label_;
  if (for_tty) {
    const int filled = static_cast<int>(fraction * kBarWidth);
    line += " [" + std::string(filled, '#') + std::string(kBarWidth - filled, '.') + "]";
  }
  if (show_counts_)
    line += fmt::format(" {}/{} ({:.0f}%) {}", done_, total_, std::floor(fraction * 100),
                        format_rate(rate));
  else
    line += fmt::format(" {:.0f}%", std::floor(fraction * 100));
  if (final || done_ == total_) {
    line += " in " + format_duration(elapsed);
  } else {
    const double eta = rate > 0 ? static_cast<double>(total_ - done_) / rate : NAN;
    line += " ETA " + format_duration(eta);
  }
  if (!status_.empty()) line += "  " + status_;
  return line;
}

void Progress::draw_tty(bool final) {
  std::string line = render(true, final);
  // Blank what is left of a longer previous line; plain spaces work on every terminal.
  const size_t width = line.size();
  if (width < last_width_) line.append(last_width_ - width, ' ');
  out_ << '\r' << line << std::flush;
  last_width_ = width;
  last_draw_ = now_();
  drawn_ = true;
}

void Progress::print_line(bool final) {
  out_ << render(false, final) << '\n' << std::flush;  // logs are often followed live
  printed_done_ = done_;
  printed_status_ = status_;
}

}  // namespace lenlab
