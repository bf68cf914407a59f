import { SingleBar } from 'cli-progress';
import { printable } from '../protocol/index.ts';

/**
 * A progress bar on a terminal (cli-progress), and nothing but a line per stage elsewhere: a log file or a test
 * should not fill up with redraws.
 */
export class ProgressDisplay {
  private bar: SingleBar | null = null;
  private label = '';

  constructor(private readonly stream: NodeJS.WriteStream) {}

  update(text: string, done: number, total: number): void {
    // A repository's name, from outside: shown, not obeyed by the terminal.
    const label = printable(text);
    if (label !== this.label) {
      this.stop();
      this.label = label;
      if (this.stream.isTTY) {
        this.bar = new SingleBar({
          format: `${label} [{bar}] {value}/{total}`,
          stream: this.stream,
          hideCursor: true,
        });
        this.bar.start(total, done);
      } else {
        this.stream.write(`${label}: ${total}\n`);
      }
      return;
    }
    this.bar?.setTotal(total);
    this.bar?.update(done);
  }

  /**
   * A line of the command's own (a `flowsync: …` line said while the first sync runs, which does not wait for it):
   * on a terminal the bar's line is cleared first and the bar drawn again below, so that the line is not written
   * onto the end of the bar's (it was, at a restart).
   */
  line(text: string): void {
    if (!this.bar) {
      this.stream.write(`${text}\n`);
      return;
    }
    // The bar saved the cursor where it began (ESC 7) and goes back there when it stops: saved again on the line
    // below, or the lines after the bar would be written over it.
    this.stream.write(`\r\x1b[2K${text}\n\x1b7`);
    this.bar.render();
  }

  stop(): void {
    this.bar?.stop();
    this.bar = null;
    this.label = '';
  }
}
