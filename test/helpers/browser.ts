/**
 * Launches the system Chromium (installed by scripts/install-chromium.sh) through playwright-core.
 * Each launch gets a fresh temporary profile, so tests never share cookies or storage.
 */
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * Reads the QR code a page shows, as a phone would: Chromium draws the page's <svg> onto a canvas (with a
 * quiet zone), and the pixels are decoded with an independent decoder (the `qr` package). Returns the text.
 */
export async function readQrCode(page: Page, selector: string): Promise<string> {
  const { decodeQR } = await import('qr/decode.js');
  const image = await page.locator(selector).evaluate(async (svg) => {
    const size = 400;
    const quiet = 40;
    const img = new Image();
    img.src = `data:image/svg+xml;base64,${btoa(new XMLSerializer().serializeToString(svg))}`;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = size + 2 * quiet;
    const g = canvas.getContext('2d')!;
    g.fillStyle = '#fff';
    g.fillRect(0, 0, canvas.width, canvas.height);
    g.drawImage(img, quiet, quiet, size, size);
    const { data, width, height } = g.getImageData(0, 0, canvas.width, canvas.height);
    return { width, height, data: Array.from(data) };
  });
  return decodeQR({ width: image.width, height: image.height, data: Uint8Array.from(image.data) }, { format: 'RGBA' });
}
