import FoundationEssentials

/// Where a media with pictures starts, the same on every engine: muxers shift every stream
/// by an audio encoder's delay (AAC's priming, Opus's pre-skip, a WMA frame), so the first
/// picture meant for the start can lie a little after the container's first timestamp. An
/// adapter that finds its first picture there takes that picture's time as the start.
public enum MediaStart {
    /// The longest such shift in practice: one audio frame at 44.1-48 kHz (AAC 21-23 ms,
    /// MP3 24-26 ms, WMA 43-46 ms), rounded up.
    public static let encoderDelayAllowance: TimeInterval = 0.05

    /// True when a first picture at `firstPicture` (seconds on the container's timeline) is
    /// the media's start at `start`: it lies after it by no more than a frame
    /// (`frameDuration`, with a millisecond for timestamps rounded to one) or
    /// `encoderDelayAllowance`, whichever is longer.
    public static func isStart(firstPicture: TimeInterval, start: TimeInterval, frameDuration: TimeInterval) -> Bool {
        let gap = firstPicture - start
        return gap > 0 && gap <= max(frameDuration + 0.001, encoderDelayAllowance)
    }
}
