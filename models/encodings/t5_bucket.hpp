#pragma once
// T5's causal bucket of a distance n ≥ 0 (Raffel et al., mesh-tensorflow's and Hugging Face's
// _relative_position_bucket with bidirectional=False): n itself below n_buckets/2; past it,
// n_buckets/2 + ⌊log(n / (n_buckets/2)) / log(max_distance / (n_buckets/2)) · (n_buckets/2)⌋
// computed in float32 as they do, capped at n_buckets − 1 (models/encodings/t5.cpp).

namespace lenlab {

int t5_bucket(int n, int n_buckets, int max_distance);

}  // namespace lenlab
