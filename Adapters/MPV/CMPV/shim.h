#include <mpv/client.h>
#include <mpv/render.h>
