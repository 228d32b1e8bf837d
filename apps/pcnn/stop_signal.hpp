// SIGINT and SIGTERM as a request to stop training cleanly: the handler only sets a flag, which
// the epoch loop reads after every step. The handler is installed for one delivery
// (SA_RESETHAND), so a second signal gets the default action and ends the process at once.
#pragma once

namespace pcnn::cli {

void install_stop_handlers();
bool stop_requested();
// The signal that asked (SIGINT or SIGTERM), 0 when none has.
int stop_signal();

}  // namespace pcnn::cli
