#pragma once
// The files of an evaluation, one row per test length (and depth), as a trained run (lenlab train,
// a sweep, the live page) and lenlab eval both write them: each file's writer beside its reader,
// so that the format cannot drift, and one call that writes them all.
//   results.csv             always: the metric per length (train/evaluate.hpp)
//   positions.csv           markov: each position at the longest length
//   attention.csv           with attention statistics: entropy and largest probability per head
//   attention_distance.csv  with them: the mean attention logit per head and distance
//   representation.csv      with --representation-stats: the attention outputs' distance from
//                           those at l_train (train/representation_stats.hpp)
//   untrained_bias.csv      a learned bias with entries no training step reached (T5's far
//                           buckets): the test pairs that read them (train/untrained_bias.hpp)
#include <filesystem>
#include <string>
#include <vector>

#include "train/evaluate.hpp"

namespace lenlab {

// Writes the files the results hold data for into `dir`, each atomically, and returns their names
// in the order above.
std::vector<std::string> write_length_files(const std::filesystem::path& dir,
                                            const std::vector<LengthResult>& results);
// Every name write_length_files may write: what a replaced run or evaluation must not leave.
std::vector<std::string> length_file_names();
// `files` sorted by their place in `order` (names not in it last, as given): the order in which
// manifest.json and eval.json have always listed their files.
std::vector<std::string> in_listing_order(std::vector<std::string> files,
                                          const std::vector<std::string>& order);

// results.csv: one row per test length (token tasks: per length and depth), and its reader
// (UsageError naming `where` on any malformed row). The two directions live together so the
// format cannot drift. A scalar task's columns:
//   length,mse,mean_prediction,mean_target,mse_reparam,n_sequences,exact,n_clamped,n_nonfinite
// a token task's (depth empty unless a passkey cell at a fixed depth; excess_ce and
// chain_cross_entropy nan unless markov):
//   length,depth,token_accuracy,exact_match,cross_entropy,excess_ce,n_sequences,n_answer_tokens,
//   chain_cross_entropy
// and, for a run evaluated with greedy decoding (EvalJob::greedy), two more:
//   generated_token_accuracy,generated_exact_match
// A token file written by an earlier lenlab (without chain_cross_entropy) still reads, unless it
// holds a markov excess: that one was measured against H_t and is refused (UsageError saying how
// to measure it again).
std::string results_csv_text(const std::vector<LengthResult>& rows);
std::vector<LengthResult> parse_results_csv(const std::string& text, const std::string& where);

// positions.csv (markov and text): one row per position of one length's result:
//   length,position,cross_entropy,entropy,excess_ce,token_accuracy,chain_cross_entropy
// (excess_ce = cross_entropy − chain_cross_entropy; entropy, excess_ce and chain_cross_entropy
// nan for text). A file written by an earlier lenlab reads as results.csv's does.
std::string positions_csv_text(const LengthResult& result);
std::vector<PositionResult> parse_positions_csv(const std::string& text, const std::string& where);

// attention.csv: one row per (test length, depth, layer, head) of results that have statistics:
//   length,depth,layer,head,entropy,max_prob,logit_std
// (depth empty unless a passkey cell at a fixed depth; layers and heads counted from 0; logit_std
// the square root of LengthResult::logits' logit_var, empty without it). Its reader puts each
// row's statistics into the LengthResult of its length and depth (UsageError naming `where` on a
// malformed row, a length results.csv lacks, or a length missing a layer or head).
std::string attention_csv_text(const std::vector<LengthResult>& results);
void add_attention_csv(const std::string& text, const std::string& where,
                       std::vector<LengthResult>& results);

// attention_distance.csv: one row per (test length, depth, layer, head, distance) of results with
// logits:  length,depth,layer,head,distance,mean_logit
// read into each result's logits.by_distance, the same way (its logit_var stays NaN:
// attention.csv's logit_std has it).
std::string attention_distance_csv_text(const std::vector<LengthResult>& results);
void add_attention_distance_csv(const std::string& text, const std::string& where,
                                std::vector<LengthResult>& results);

// representation.csv: one row per (test length, depth, layer) of results with the measurement:
//   length,depth,layer,rows,reference_rows,sliced_w1,js_distance,kl_divergence,reference_std
// read into each result's representation, the same way (a layer once per length and depth).
std::string representation_csv_text(const std::vector<LengthResult>& results);
void add_representation_csv(const std::string& text, const std::string& where,
                            std::vector<LengthResult>& results);

// untrained_bias.csv: one row per (test length, depth) of results that count them:
//   length,depth,untrained_pairs
// the fraction of the (answer row, key) pairs attended whose distance reads a bias entry still at
// its initial value (LengthResult::untrained_pairs), read back the same way (UsageError on a value
// outside [0, 1] or a length twice).
std::string untrained_bias_csv_text(const std::vector<LengthResult>& results);
void add_untrained_bias_csv(const std::string& text, const std::string& where,
                            std::vector<LengthResult>& results);

}  // namespace lenlab
