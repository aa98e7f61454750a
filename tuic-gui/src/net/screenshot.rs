//! The answer to `ui-screenshot-requested`: the window's pixels (captured by egui after a frame
//! is painted) encoded as PNG on the blocking pool and posted to `POST /ui/screenshot/:id`.

use std::sync::Arc;

use base64::Engine as _;
use eframe::egui::ColorImage;
use serde_json::json;

use super::Handle;
use super::api::Api;
use crate::lock::Recover as _;

/// The largest PNG tuicd accepts (its 2 MB body limit holds the base64 of 1.5 MB, less a margin).
const SCREENSHOT_MAX_BYTES: usize = 2 * 1024 * 1024 / 4 * 3 - 1024;

pub(super) async fn answer(handle: Handle, api: Api, id: String, image: Arc<ColorImage>) {
    let encoded = tokio::task::spawn_blocking(move || encode_within(&image, SCREENSHOT_MAX_BYTES)).await;
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

/// The image as a PNG of at most `max_bytes`: a window too large for that (a 4K screen full of
/// text) is halved until it fits, since an answer the daemon refuses would leave the caller
/// waiting out its deadline.
fn encode_within(image: &ColorImage, max_bytes: usize) -> Result<Vec<u8>, png::EncodingError> {
    let mut png = encode(image)?;
    let mut smaller;
    let mut current = image;
    while png.len() > max_bytes && current.size[0] > 1 && current.size[1] > 1 {
        smaller = halve(current);
        current = &smaller;
        png = encode(current)?;
    }
    Ok(png)
}

/// Every 2x2 block averaged into one pixel.
fn halve(image: &ColorImage) -> ColorImage {
    let [width, height] = image.size;
    let (w, h) = (width / 2, height / 2);
    let mut pixels = Vec::with_capacity(w * h);
    for y in 0..h {
        for x in 0..w {
            let at = |dx: usize, dy: usize| image.pixels[(2 * y + dy) * width + 2 * x + dx];
            let block = [at(0, 0), at(1, 0), at(0, 1), at(1, 1)];
            let mean = |channel: fn(&eframe::egui::Color32) -> u8| {
                (block.iter().map(|c| u16::from(channel(c))).sum::<u16>() / 4) as u8
            };
            pixels.push(eframe::egui::Color32::from_rgb(mean(|c| c.r()), mean(|c| c.g()), mean(|c| c.b())));
        }
    }
    ColorImage::new([w, h], pixels)
}

/// The image as an RGB PNG: the window is opaque, so alpha would only add a quarter to the size.
fn encode(image: &ColorImage) -> Result<Vec<u8>, png::EncodingError> {
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

    #[test]
    fn a_picture_too_large_for_the_daemon_is_halved_until_it_fits() {
        // Noise does not compress: 200x100 RGB is about 60 KB as PNG.
        let mut seed = 7u32;
        let pixels = (0..200 * 100)
            .map(|_| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                let [r, g, b, _] = seed.to_le_bytes();
                Color32::from_rgb(r, g, b)
            })
            .collect();
        let noise = ColorImage::new([200, 100], pixels);
        let size = |png: &[u8]| {
            let reader = png::Decoder::new(std::io::Cursor::new(png.to_vec())).read_info().unwrap();
            (reader.info().width, reader.info().height)
        };
        assert_eq!(size(&encode_within(&noise, 1 << 20).unwrap()), (200, 100), "fits: kept whole");
        let png = encode_within(&noise, 10_000).unwrap();
        assert!(png.len() <= 10_000, "{} bytes", png.len());
        assert_eq!(size(&png), (50, 25), "halved twice");
        let grey = halve(&ColorImage::new(
            [2, 2],
            vec![
                Color32::from_rgb(0, 0, 0),
                Color32::from_rgb(100, 0, 0),
                Color32::from_rgb(0, 0, 0),
                Color32::from_rgb(100, 0, 0),
            ],
        ));
        assert_eq!(grey.pixels, [Color32::from_rgb(50, 0, 0)]);
    }
}
