#ifndef PLAYBACKKIT_CLIBASS_SHIM_H
#define PLAYBACKKIT_CLIBASS_SHIM_H

/* libass: the text subtitle renderer the FFmpeg engine and the libVLC adapter's .frames
   output draw with. */
#include <ass/ass.h>

#endif
