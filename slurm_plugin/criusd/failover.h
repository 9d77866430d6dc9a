// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// With a backup slurmctld (several SlurmctldHost lines), criusd runs beside each controller and
// acts only beside the one in control: its free-GPU report then lands where the active
// job_submit reads it, and two criusd never move the same jobs (criusd(8), FAILOVER).
// The controller in control is the one whose index the heartbeat file names: slurmctld in
// control writes StateSaveLocation/heartbeat (two big-endian 64-bit numbers: the time and its
// index among the SlurmctldHost lines) every min(SlurmctldTimeout/4, 30) s, in Slurm 22.05
// and 24.11 alike (src/slurmctld/heartbeat.c), and only while it controls.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crius::slurm {

struct Heartbeat {
  std::int64_t time = 0;  // Unix seconds of its last beat
  int controller = 0;     // its writer's index among the SlurmctldHost lines
};
// The heartbeat file's 16 bytes; none when the file is shorter.
std::optional<Heartbeat> parse_heartbeat(std::string_view bytes);

// This host's index among the controllers, as slurmctld finds its own: the first SlurmctldHost
// whose name is this host's short or full name (src/slurmctld/controller.c,
// _controller_index); -1: none.
int controller_index(const std::vector<std::string>& controllers, const std::string& short_name,
                     const std::string& full_name);

struct Role {
  bool act = false;
  std::string why;        // why criusd acts or waits, for its log (said when it changes)
  bool failover = false;  // several controllers: the role can change within a round
  bool unreadable = false;  // Slurm did not answer: a failed round, not a standby
};
// Whether criusd acts this round. controllers: the SlurmctldHost names; self: this host's
// index (-1: not a controller host); heartbeat: the file's content, or none with `error`;
// self_answers: this host's slurmctld answered a ping.
Role controller_role(const std::vector<std::string>& controllers, int self, const std::optional<Heartbeat>& heartbeat,
                     const std::string& error, bool self_answers, std::time_t now, int slurmctld_timeout_s);

}  // namespace crius::slurm
