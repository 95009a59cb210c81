// A bias finite in double but not in float32 is refused where a float32 run would hold it (models/
// position_bias.hpp's check_float32_bias, from resolve()), naming the setting and float32's limit,
// instead of a run that ends at step 1 with a loss that is not finite; a float64 run keeps it.
#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "models/position_bias.hpp"
#include "train/run_settings.hpp"

using namespace lenlab;

namespace {

TrainSpec spec(const std::string& pe, const std::string& precision) {
  TrainSpec s;
  s.pe = pe;
  s.precision = precision;
  return s;
}

}  // namespace

TEST_CASE("fire's --fire-threshold past float32's range: refused at float32, kept at float64") {
  TrainSpec s = spec("fire", "float32");
  s.fire_threshold = "1e300";
  CHECK_THROWS_WITH_AS(
      resolve(s),
      doctest::Contains("--fire-threshold sets pe.fire.threshold to 1e+300, beyond "
                        "float32's largest finite value (3.4e+38)"),
      UsageError);
  s.fire_threshold = "1e39";  // just past FLT_MAX
  CHECK_THROWS_WITH_AS(resolve(s), doctest::Contains("--fire-threshold"), UsageError);
  s.fire_threshold = "3e38";  // within it
  CHECK_NOTHROW(resolve(s));
  s.fire_threshold = "1e300";
  s.precision = "float64";
  CHECK_NOTHROW(resolve(s));
}

TEST_CASE("a user's bias past float32's range: refused at the first distance and head it reaches") {
  TrainSpec s = spec("bias", "float32");
  s.pe_bias = "1e39-d";
  CHECK_THROWS_WITH_AS(
      resolve(s),
      doctest::Contains(
          "--pe-bias '1e39-d' is 1e+39 at distance d = 0, head h = 0: beyond float32's "
          "largest finite value (3.4e+38)"),
      UsageError);
  // Overflowing only far away: d·1e37 passes float32's limit at d = 35, within l_test 40's
  // distances (BOS + 40 + EOS tokens: up to 41).
  s.pe_bias = "-d*1e37";
  s.l_test = 40;
  CHECK_THROWS_WITH_AS(resolve(s), doctest::Contains("at distance d = 35, head h = 0"), UsageError);
  s.l_test = 30;  // distances up to 31: -3.1e38 at most, finite in float
  CHECK_NOTHROW(resolve(s));
  s.pe_bias = "1e39-d";
  s.precision = "float64";
  CHECK_NOTHROW(resolve(s));
}

TEST_CASE("the built-in biases stay within float32 at the longest lengths") {
  for (const char* pe : {"alibi", "kerple", "t5", "fire"}) {
    CAPTURE(pe);
    ModelConfig c;
    c.pe = parse_positional_encoding(pe);
    c.n_head = 8;
    c.max_positions = 1000002;
    CHECK_NOTHROW(check_float32_bias(c, c.max_positions - 1));
  }
}
