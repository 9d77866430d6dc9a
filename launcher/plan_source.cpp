// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "launcher/plan_source.h"

#include "common/util.h"

namespace crius::launcher {

namespace est = crius::estimator;

Result<est::Plan> plan_from_document(const nlohmann::json& doc_in, const std::string& what) {
  const nlohmann::json* doc = &doc_in;
  if (doc->is_object() && doc->contains("cells")) {
    const auto& cells = (*doc)["cells"];
    if (!cells.is_array()) return make_error(what + ": key 'cells' must be an array");
    const nlohmann::json* pick = nullptr;
    for (std::size_t i = 0; i < cells.size() && !pick; ++i) {
      const auto& c = cells[i];
      if (!c.is_object()) continue;
      const auto f = c.find("feasible");
      if (f != c.end() && !f->is_boolean())
        return make_error(what + ": key 'cells[" + std::to_string(i) + "].feasible' must be true or false");
      if (f == c.end() || f->get<bool>()) pick = &c;
    }
    if (!pick) return make_error(what + ": no feasible cell in 'cells'");
    doc = pick;
  }
  if (doc->is_object() && doc->contains("plan")) doc = &(*doc)["plan"];
  return est::plan_from_json(*doc, what);
}

Result<est::Plan> plan_from_document_text(std::string_view text, const std::string& what) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return make_error(what + ": not valid JSON");
  return plan_from_document(j, what);
}

std::string format_int_list(const std::vector<int>& values) {
  std::vector<std::string> items;
  for (int v : values) items.push_back(std::to_string(v));
  return util::join(items, ",");
}

Result<std::vector<int>> parse_int_list(std::string_view text, const std::string& what) {
  std::vector<int> out;
  for (const auto& item : util::split(text, ',')) {
    auto v = util::to_int(item);
    if (!v || *v < 1 || *v > 1000000)
      return make_error(what + ": '" + std::string(text) + "' is not a positive integer or a comma list of them");
    out.push_back(static_cast<int>(*v));
  }
  return out;
}

Result<std::vector<std::pair<int, int>>> parse_layer_ranges(std::string_view text, const std::string& what) {
  std::vector<std::pair<int, int>> out;
  for (const auto& item : util::split(text, ',')) {
    auto dash = item.find('-');
    std::optional<long long> a, b;
    if (dash == std::string::npos) {
      a = b = util::to_int(item);
    } else {
      a = util::to_int(std::string_view(item).substr(0, dash));
      b = util::to_int(std::string_view(item).substr(dash + 1));
    }
    if (!a || !b || *a < 0 || *b < *a || *b > 10000000)
      return make_error(what + ": '" + item + "' is not a layer range FIRST-LAST (e.g. \"0-11,12-23\")");
    out.emplace_back(static_cast<int>(*a), static_cast<int>(*b));
  }
  return out;
}

Result<est::Plan> plan_from_shape(const std::string& tp_s, int pp, const std::string& dp_s,
                                  const std::string& stage_layers, int layers) {
  if (pp < 1) return make_error("--pp: must be >= 1 (got " + std::to_string(pp) + ")");
  if (pp > est::kMaxStages) return make_error("--pp: at most " + std::to_string(est::kMaxStages) + " stages");
  auto tp = parse_int_list(tp_s, "--tp");
  if (!tp) return make_error(tp.error());
  auto dp = parse_int_list(dp_s, "--dp");
  if (!dp) return make_error(dp.error());
  for (const auto& [list, flag] : {std::pair{&*tp, "--tp"}, std::pair{&*dp, "--dp"}})
    if (list->size() != 1 && static_cast<int>(list->size()) != pp)
      return make_error(std::string(flag) + ": " + std::to_string(list->size()) + " values for " +
                        std::to_string(pp) + " stages (give one value or one per stage)");
  est::Plan plan;
  plan.stages.resize(static_cast<std::size_t>(pp));
  for (int i = 0; i < pp; ++i) {
    plan.stages[i].tp = tp->size() == 1 ? (*tp)[0] : (*tp)[i];
    plan.stages[i].dp = dp->size() == 1 ? (*dp)[0] : (*dp)[i];
  }
  if (!stage_layers.empty()) {
    auto r = parse_layer_ranges(stage_layers, "--stage-layers");
    if (!r) return make_error(r.error());
    if (static_cast<int>(r->size()) != pp)
      return make_error("--stage-layers: " + std::to_string(r->size()) + " layer ranges for " + std::to_string(pp) +
                        " stages");
    for (int i = 0; i < pp; ++i) {
      plan.stages[i].layer_begin = (*r)[i].first;
      plan.stages[i].layer_end = (*r)[i].second + 1;
    }
    if (layers > 0 && plan.num_layers() != layers)
      return make_error("--stage-layers: the ranges cover " + std::to_string(plan.num_layers()) + " layers, not " +
                        std::to_string(layers));
  } else if (layers > 0) {
    if (layers % pp != 0)
      return make_error("--layers: " + std::to_string(layers) + " layers do not divide into " + std::to_string(pp) +
                        " equal stages; give --stage-layers");
    const int per = layers / pp;
    for (int i = 0; i < pp; ++i) {
      plan.stages[i].layer_begin = i * per;
      plan.stages[i].layer_end = (i + 1) * per;
    }
  }
  if (auto r = est::validate(plan, "plan"); !r) return make_error(r.error());
  return plan;
}

}  // namespace crius::launcher
