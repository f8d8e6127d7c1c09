// Built only by the test floors.BuildRefusesSinksIncludingStage, with the sinks floor's flags: it
// must fail, for want of the header, because a sink never sees a stage.
#include "stages/format/event_codec.hpp"
