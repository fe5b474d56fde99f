// Images from JavaScript and TypeScript code (docs/runner-protocol.md, `image` frames): the global
// `sandgate.show(image, mime?)`, and returnImage/returnContent, which pass upstream MCP content to the agent.
'use strict';

const fs = require('fs');
const { Buffer } = require('buffer');

// User code shares this realm and may replace any global; keep our own copies.
const { stringify } = JSON;
const { isArray } = Array;
const bufferFrom = Buffer.from;
const isBuffer = Buffer.isBuffer;
const readFileSync = fs.readFileSync;
const statSync = fs.statSync;
const freeze = Object.freeze;

const SVG = 'image/svg+xml';
/** How far into an SVG document its root element may start; the host checks the same. */
const SVG_ROOT_WITHIN = 4096;
const BASE64 = /^[A-Za-z0-9+/\s]+={0,2}\s*$/;
/** Largest base64 text sent when the host named no limit: a frame must stay under the host's 16 MiB. */
const UNTOLD_LIMIT = 12 * 1024 * 1024;
const SHOWABLE = 'a Buffer, Uint8Array or ArrayBuffer of PNG/JPEG/GIF/WebP/SVG data, base64 text, SVG text, a path to an image file, or an MCP image content item';

/** The image type `data` (a Buffer) starts like, or undefined. */
function sniff(data) {
  if (data.length >= 8 && data.readUInt32BE(0) === 0x89504e47 && data.readUInt32BE(4) === 0x0d0a1a0a) return 'image/png';
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  const head = data.toString('latin1', 0, 12);
  if (head.startsWith('GIF87a') || head.startsWith('GIF89a')) return 'image/gif';
  if (head.startsWith('RIFF') && head.slice(8, 12) === 'WEBP') return 'image/webp';
  if (isSvg(data.toString('utf8', 0, SVG_ROOT_WITHIN))) return SVG;
  return undefined;
}

function isSvg(text) {
  const head = text.slice(0, SVG_ROOT_WITHIN);
  return /^\s*</.test(head) && /<svg[\s>]/.test(head);
}

/**
 * `sendText` writes one frame's JSON to the host; `runId()` is the running call's id (undefined
 * between calls, when an image has nowhere to go).
 */
function createImages({ sendText, runId }) {
  /** Largest image the host keeps, from the running call's execute frame. */
  let maxBytes;

  function send(data, mime) {
    const id = runId();
    if (id === undefined) return;
    const frame = { type: 'image', id, mime };
    if (maxBytes !== undefined && data.length > maxBytes) frame.size = data.length;
    else frame.data = data.toString('base64');
    sendText(stringify(frame));
  }

  /** [data, mime] of `image`, or undefined. */
  function imageOf(image, mime) {
    if (isBuffer(image)) return [image, mime || sniff(image)];
    if (image instanceof Uint8Array) return imageOf(bufferFrom(image.buffer, image.byteOffset, image.byteLength), mime);
    if (image instanceof ArrayBuffer) return imageOf(bufferFrom(image), mime);
    if (typeof image === 'string') {
      if (isSvg(image)) return [bufferFrom(image, 'utf8'), mime || SVG];
      if (image.length >= 8 && BASE64.test(image)) {
        const data = bufferFrom(image, 'base64');
        const found = sniff(data);
        if (found || mime) return [data, mime || found];
      }
      return fromFile(image, mime);
    }
    if (image !== null && typeof image === 'object' && image.type === 'image' && typeof image.data === 'string') {
      const data = bufferFrom(image.data, 'base64');
      return [data, mime || sniff(data) || (typeof image.mimeType === 'string' ? image.mimeType : undefined)];
    }
    return undefined;
  }

  function fromFile(path, mime) {
    let size;
    try {
      size = statSync(path).size;
    } catch (err) {
      throw new TypeError(`sandgate.show(): ${stringify(path.slice(0, 200))} is neither image data nor a readable file (${err && err.code}); pass ${SHOWABLE}`);
    }
    // A file over the host's limit is only named, never read.
    if (maxBytes !== undefined && size > maxBytes) return [{ length: size }, mime || (path.toLowerCase().endsWith('.svg') ? SVG : 'image/png')];
    const data = readFileSync(path);
    return [data, mime || sniff(data) || (path.toLowerCase().endsWith('.svg') ? SVG : undefined)];
  }

  /** sandgate.show(image, mime?): returns an image to the agent now; an array shows every image item of an MCP content list. */
  function show(image, mime) {
    if (mime !== undefined && typeof mime !== 'string') throw new TypeError('sandgate.show(): mime must be a string like "image/png"');
    if (isArray(image)) {
      const items = image.filter((item) => item !== null && typeof item === 'object' && item.type === 'image');
      if (items.length === 0) throw new TypeError(`sandgate.show() got an array without image content items; pass ${SHOWABLE}`);
      for (const item of items) show(item, mime);
      return;
    }
    const found = imageOf(image, mime);
    if (found === undefined) throw new TypeError(`sandgate.show() cannot make an image of ${image === null ? 'null' : typeof image}; pass ${SHOWABLE}`);
    if (found[1] === undefined) throw new TypeError('sandgate.show(): the image type is unknown; pass the mime type, e.g. sandgate.show(data, "image/png")');
    send(found[0], found[1]);
  }

  // ---- returnImage / returnContent: upstream MCP content passed on to the agent ----

  function blocksOf(content, who) {
    if (content !== null && typeof content === 'object' && !isArray(content) && content.type === undefined && isArray(content.content)) content = content.content;
    if (content !== null && typeof content === 'object' && !isArray(content)) content = [content];
    if (!isArray(content)) {
      throw new TypeError(`${who}() needs MCP content: a block like { type: "image", data, mimeType: "image/png" }, an array of blocks or a tool result, not ${content === null ? 'null' : typeof content}`);
    }
    for (const item of content) {
      if (item === null || typeof item !== 'object' || typeof item.type !== 'string') throw new TypeError(`${who}() got ${item === null ? 'null' : typeof item} where an MCP content block (an object with a type) belongs`);
    }
    return content;
  }

  /** Sends base64 text as it came; the host checks it and says in images_note what it dropped. Text over the limit is only named. */
  function sendBase64(data, mime) {
    const id = runId();
    if (id === undefined) return;
    const frame = { type: 'image', id, mime: typeof mime === 'string' ? mime.slice(0, 256) : '' };
    if (typeof data === 'string') {
      if (/\s/.test(data)) data = data.replace(/\s+/g, '');
      const size = Math.floor((data.length * 3) / 4);
      if (size - 2 > (maxBytes !== undefined ? maxBytes : UNTOLD_LIMIT)) frame.size = size;
      else {
        if (!frame.mime) frame.mime = sniff(bufferFrom(data.slice(0, 16), 'base64')) || '';
        frame.data = data;
      }
    }
    sendText(stringify(frame)); // without data or size: the host counts it as refused
  }

  function writeText(text) {
    process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  function note(kind, mime, size, uri) {
    const what = [kind, uri, mime ? `(${mime}, ${size} bytes)` : `(${size} bytes)`].filter(Boolean).join(' ');
    return `[${what} not passed on: the result carries text and images only; write it to a file in /workspace if it is needed later]`;
  }

  function passOn(content, imagesOnly) {
    const who = imagesOnly ? 'returnImage' : 'returnContent';
    let blocks = blocksOf(content, who);
    if (imagesOnly) {
      const found = blocks.filter((b) => b.type === 'image');
      if (found.length === 0) throw new TypeError(`returnImage() got no image block (it got ${[...new Set(blocks.map((b) => b.type))].join(', ') || 'nothing'}); use returnContent() for other content`);
      blocks = found;
    }
    for (const block of blocks) {
      const kind = block.type;
      if (kind === 'image') sendBase64(block.data, block.mimeType);
      else if (kind === 'text') writeText(String(block.text === undefined ? '' : block.text));
      else if (kind === 'resource') {
        const res = block.resource !== null && typeof block.resource === 'object' ? block.resource : {};
        const mime = typeof res.mimeType === 'string' ? res.mimeType : '';
        if (typeof res.text === 'string') writeText(res.text);
        else if (mime.startsWith('image/') && typeof res.blob === 'string') sendBase64(res.blob, mime);
        else writeText(note('resource', mime, typeof res.blob === 'string' ? Math.floor((res.blob.length * 3) / 4) : 0, String(res.uri === undefined ? '' : res.uri).slice(0, 200)));
      } else if (kind === 'resource_link') writeText(`[resource ${String(block.uri).slice(0, 500)}${block.name ? ` ${String(block.name).slice(0, 200)}` : ''}]`);
      else writeText(note(kind.slice(0, 40), typeof block.mimeType === 'string' ? block.mimeType.slice(0, 100) : '', typeof block.data === 'string' ? Math.floor((block.data.length * 3) / 4) : 0));
    }
  }

  /** returnImage(content): passes the image blocks of upstream content (a block, an array, a tool result) to the agent. */
  function returnImage(content) {
    passOn(content, true);
  }

  /** returnContent(content): images as images, text printed to the output, audio and binary resources named in a line. */
  function returnContent(content) {
    passOn(content, false);
  }

  return {
    /** The global `sandgate` object of user code. */
    api: freeze({ show, returnImage, returnContent }),
    returnImage,
    returnContent,
    setMaxBytes(value) {
      maxBytes = typeof value === 'number' && value > 0 ? value : undefined;
    },
  };
}

module.exports = { createImages };
