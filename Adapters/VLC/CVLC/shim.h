#include <vlc/vlc.h>
