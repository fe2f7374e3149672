import { prefix } from '../../text/index.js';

/**
 * Cuts a byte stream into whole lines for the stream channel. Partials are redacted line by line,
 * so a phone number split across two chunks must not go out as two harmless halves: only complete
 * lines leave (a line longer than `maxLine` goes out in pieces of that size).
 */
export class LineSplitter {
  private readonly decoder = new TextDecoder('utf-8');
  private rest = '';

  constructor(
    private readonly emit: (line: string) => void,
    private readonly maxLine = 16 * 1024,
  ) {}

  push(chunk: Uint8Array): void {
    this.rest += this.decoder.decode(chunk, { stream: true });
    let at = this.rest.indexOf('\n');
    while (at !== -1) {
      this.emit(this.rest.slice(0, at).replace(/\r$/, ''));
      this.rest = this.rest.slice(at + 1);
      at = this.rest.indexOf('\n');
    }
    while (this.rest.length > this.maxLine) {
      // Between grapheme clusters, so neither piece holds half a character (src/text).
      const head =
        prefix(this.rest, this.maxLine) || String.fromCodePoint(this.rest.codePointAt(0) ?? 0xfffd);
      this.emit(head);
      this.rest = this.rest.slice(head.length);
    }
  }

  end(): void {
    this.rest += this.decoder.decode();
    if (this.rest.length > 0) this.emit(this.rest);
    this.rest = '';
  }
}
