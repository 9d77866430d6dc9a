// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "slurm_plugin/criusd/failover.h"

namespace crius::slurm {


std::optional<Heartbeat> parse_heartbeat(std::string_view bytes) {
  if (bytes.size() < 16) return std::nullopt;
  auto be64 = [&](std::size_t at) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
    return v;
  };
  const std::uint64_t t = be64(0), index = be64(8);
  if (t > static_cast<std::uint64_t>(INT64_MAX) || index > 1024) return std::nullopt;
  return Heartbeat{static_cast<std::int64_t>(t), static_cast<int>(index)};
}

int controller_index(const std::vector<std::string>& controllers, const std::string& short_name,
                     const std::string& full_name) {
  for (std::size_t i = 0; i < controllers.size(); ++i)
    if (!controllers[i].empty() && (controllers[i] == short_name || controllers[i] == full_name))
      return static_cast<int>(i);
  return -1;
}

namespace {

Role role_of_several(const std::vector<std::string>& controllers, int self, const std::optional<Heartbeat>& heartbeat,
                     const std::string& error, bool self_answers, std::time_t now, int slurmctld_timeout_s) {
  if (self < 0)
    return {false, "slurm.conf names " + std::to_string(controllers.size()) +
                       " controllers and this host is none of them: criusd acts only beside the one in control"};
  const std::string me = controllers[static_cast<std::size_t>(self)];
  if (!heartbeat) return {false, "cannot tell which slurmctld is in control: " + error};
  if (!self_answers) return {false, "this host's slurmctld (" + me + ") does not answer"};
  if (heartbeat->controller != self) {
    const std::string other = heartbeat->controller < static_cast<int>(controllers.size())
                                  ? controllers[static_cast<std::size_t>(heartbeat->controller)]
                                  : "controller " + std::to_string(heartbeat->controller);
    return {false, "slurmctld on " + other + " is in control, not the one on " + me};
  }
  // A heartbeat older than SlurmctldTimeout: its writer stopped (a backup takes over then).
  if (now - heartbeat->time > slurmctld_timeout_s)
    return {false, "the heartbeat of slurmctld on " + me + " is " + std::to_string(now - heartbeat->time) +
                       " s old (SlurmctldTimeout " + std::to_string(slurmctld_timeout_s) + " s)"};
  return {true, "slurmctld on " + me + " is in control"};
}

}  // namespace

Role controller_role(const std::vector<std::string>& controllers, int self, const std::optional<Heartbeat>& heartbeat,
                     const std::string& error, bool self_answers, std::time_t now, int slurmctld_timeout_s) {
  if (controllers.size() < 2) return {true, "slurm.conf names one slurmctld", false};
  Role r = role_of_several(controllers, self, heartbeat, error, self_answers, now, slurmctld_timeout_s);
  r.failover = true;
  return r;
}

}  // namespace crius::slurm
