import Imaging

/// An image the test's HTTP server serves.
struct ServedImage {
    let url: String
    /// The output's file name without extension (the input's, as `shiftwork submit` names it).
    let stem: String
    let width: Int
    let height: Int
    let format: ImageFormat
}
