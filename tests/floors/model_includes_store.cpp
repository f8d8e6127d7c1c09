// Built only by the test floors.BuildRefusesModelIncludingStore, with the model floor's flags: it
// must fail, for want of the header, because the model floor cannot see the store's headers.
#include "trial/store/trial_store.hpp"
