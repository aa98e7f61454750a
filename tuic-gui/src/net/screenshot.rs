//! The answer to `ui-screenshot-requested`: the window's pixels (captured by egui after a frame
//! is painted) encoded as PNG on the blocking pool and posted to `POST /ui/screenshot/:id`.

use std::sync::Arc;

use base64::Engine as _;
use eframe::egui::ColorImage;
use serde_json::json;

use super::Handle;
use super::api::Api;
use crate::lock::Recover as _;

pub(super) async fn answer(handle: Handle, api: Api, id: String, image: Arc<ColorImage>) {
    let encoded = tokio::task::spawn_blocking(move || encode(&image)).await;
    let outcome = match encoded {
        Ok(Ok(png)) => {
            let body = json!({"png_base64": base64::engine::general_purpose::STANDARD.encode(png)});
            api.send(reqwest::Method::POST, &format!("/ui/screenshot/{id}"), &body).await.map_err(|e| e.to_string())
        }
        Ok(Err(e)) => Err(format!("cannot encode the screenshot: {e}")),
        Err(e) => Err(format!("cannot encode the screenshot: {e}")),
    };
    if let Err(why) = outcome {
        handle.snapshot.locked().error = Some(format!("screenshot {id}: {why}"));
        handle.repaint.request();
    }
}

/// The image as an RGB PNG: the window is opaque, so alpha would only add a quarter to the size.
pub(super) fn encode(image: &ColorImage) -> Result<Vec<u8>, png::EncodingError> {
    let [width, height] = image.size;
    let mut rgb = Vec::with_capacity(width * height * 3);
    for pixel in &image.pixels {
        rgb.extend_from_slice(&[pixel.r(), pixel.g(), pixel.b()]);
    }
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width as u32, height as u32);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    // Fast: a flat UI compresses well at any level, and this runs on every request.
    encoder.set_compression(png::Compression::Fast);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&rgb)?;
    writer.finish()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use eframe::egui::Color32;

    use super::*;

    #[test]
    fn the_png_has_the_images_size_and_pixels() {
        let mut image = ColorImage::filled([3, 2], Color32::from_rgb(10, 20, 30));
        image.pixels[4] = Color32::from_rgb(200, 0, 0);
        let png = encode(&image).unwrap();
        let mut reader = png::Decoder::new(std::io::Cursor::new(png)).read_info().unwrap();
        let mut buffer = vec![0; reader.output_buffer_size().unwrap()];
        let frame = reader.next_frame(&mut buffer).unwrap();
        assert_eq!((frame.width, frame.height, frame.color_type), (3, 2, png::ColorType::Rgb));
        assert_eq!(&buffer[..3], &[10, 20, 30]);
        assert_eq!(&buffer[12..15], &[200, 0, 0], "row 1, column 1");
    }
}
