// What a run directory holds: ckpt.h5 (the newest full checkpoint), the last
// few periodic ckpt-STEP.h5 files, best.h5 and metrics.jsonl; which run they
// belong to; and where a resumed run writes (Note [Where a run writes]).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "checkpoints/checkpoint.h"

namespace train {

// Note [Where a run writes]: a run writes only into the directory its user
// named: --out for a new run; for a resumed one, --out when given, else the
// directory of the checkpoint it was given (so a copied run continues in the
// copy). The directory recorded inside a checkpoint is never used for
// writing. A directory that already holds a *different* run (another run_id,
// Note [Run identity]) is refused unless --overwrite.

// Deletes the files of the run `dir` held before (ckpt.h5, ckpt-STEP.h5,
// best.h5) except `spare` (the checkpoint a resumed run came from): a new
// run, or --overwrite, calls it once its first metrics row is written.
void retire_old_run(const std::string& dir, const std::string& spare);

// "ckpt-400.h5"
std::string periodic_name(int64_t step);

// (step, path) of every ckpt-STEP.h5 in `dir`, by increasing step.
std::vector<std::pair<int64_t, std::string>> periodic_checkpoints(const std::string& dir);

// Deletes the periodic checkpoints of `dir` older than the `keep` newest ones
// with step <= `newest_step` (files with later steps, left by an abandoned
// continuation, are replaced as the run reaches them). Call only after the
// newest one is complete. Throws tg::DataError when a deletion fails.
void prune_periodic(const std::string& dir, int64_t keep, int64_t newest_step);

// The directory of a checkpoint path ("." for a bare file name).
std::string checkpoint_dir(const std::string& ckpt_path);

// True when both name the same existing directory.
bool same_directory(const std::string& a, const std::string& b);

// True when `dir` holds a checkpoint (ckpt.h5 or a ckpt-STEP.h5).
bool holds_run(const std::string& dir);

// Note [Run identity]: a new run draws a random run_id, saved in every
// checkpoint it writes, copies included. Files from before format_version 2
// have none; there the run directory recorded at the start and the seed
// stand in for it.
std::string new_run_id();
std::string run_identity(const checkpoints::TrainState& t);

// "" when `dir` holds no run, or the run of `resumed` (read from
// `resumed_path`); else the other run's identity and checkpoint, for the
// message that refuses it. An unreadable checkpoint counts as another run.
std::string other_run_in(const std::string& dir, const checkpoints::Checkpoint& resumed,
                         const std::string& resumed_path);

}  // namespace train
