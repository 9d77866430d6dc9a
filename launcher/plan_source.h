// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Where crius-launch gets the plan it runs (crius-launch(1)), each source read
// into the one estimator::Plan:
//   --plan FILE        crius-estimate's JSON (the first feasible Cell), one Cell, or a plan
//   --tp/--pp/--dp     flags, one value or one per stage, with --stage-layers or --layers
//   the job            in a Slurm job with a crius record, the record's plan (the source of
//                      truth, also after criusd moved the job), else CRIUS_PLAN_JSON
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "estimator/plan.h"
#include "estimator/result.h"

namespace crius::launcher {

// The plan of a crius-estimate document: {"cells":[...]} (the first feasible Cell),
// one Cell object ({..., "plan":{...}}), or a plan object itself.
Result<estimator::Plan> plan_from_document(const nlohmann::json& doc, const std::string& what);
Result<estimator::Plan> plan_from_document_text(std::string_view text, const std::string& what);

// From --tp/--pp/--dp flags: each a single value or a comma list per stage;
// stage_layers like "0-11,12-23" (inclusive, optional); layers = total (optional,
// split evenly).
Result<estimator::Plan> plan_from_shape(const std::string& tp, int pp, const std::string& dp,
                                        const std::string& stage_layers, int layers);

// Parsers of the flag forms ("what" names the flag in errors).
Result<std::vector<int>> parse_int_list(std::string_view text, const std::string& what);
Result<std::vector<std::pair<int, int>>> parse_layer_ranges(std::string_view text, const std::string& what);
std::string format_int_list(const std::vector<int>& values);

}  // namespace crius::launcher
