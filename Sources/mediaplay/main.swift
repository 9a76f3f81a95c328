import PlaybackKit
import PlaybackBackends
PlaybackBackends.registerBuiltIns()
for b in Backends.all { print(b.name, b.engineVersion) }
