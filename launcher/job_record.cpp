#include "launcher/job_record.h"

#include <cstdlib>

#include <nlohmann/json.hpp>

extern "C" {
#include <slurm/slurm.h>
}

namespace crius::launcher {

std::optional<std::string> moved_plan_json(const std::string& slurm_job_id, std::string* cell) {
  char* end = nullptr;
  unsigned long id = std::strtoul(slurm_job_id.c_str(), &end, 10);
  if (slurm_job_id.empty() || *end || id == 0 || id > 0xffffffffUL) return std::nullopt;
  job_info_msg_t* msg = nullptr;
  if (slurm_load_job(&msg, static_cast<uint32_t>(id), SHOW_DETAIL) != SLURM_SUCCESS) return std::nullopt;
  std::string comment;
  if (msg->record_count > 0 && msg->job_array[0].admin_comment) comment = msg->job_array[0].admin_comment;
  slurm_free_job_info_msg(msg);
  auto j = nlohmann::json::parse(comment, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("crius")) return std::nullopt;
  const auto chosen = j.value("chosen", nlohmann::json::object());
  if (chosen.value("by", "") != "criusd" || !chosen.contains("estimate")) return std::nullopt;
  if (cell) *cell = chosen.value("cell", "");
  return chosen["estimate"].dump();
}

}  // namespace crius::launcher
