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

  stop(): void {
    this.bar?.stop();
    this.bar = null;
    this.label = '';
  }
}
