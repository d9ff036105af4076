/**
 * The overview's stacked bar chart as server-made SVG: one bar per minute or hour, sessions
 * ended in it by state (completed at the bottom, then error, then stopped), each bar's numbers
 * in its <title> and data attributes. Reads without JavaScript; colours come from the stylesheet.
 */
import type { Bar } from "../../stats/overview.ts";

const W = 720;
const H = 180;
const PAD = { left: 36, bottom: 20, top: 8 };
const STACK = ["completed", "error", "stopped"] as const;

const label = (ms: number, barMs: number) => {
  const iso = new Date(ms).toISOString();
  return barMs < 3_600_000 ? iso.slice(11, 16) : `${iso.slice(5, 10)} ${iso.slice(11, 13)}h`;
};

/**
 * @example <StackedBars bars={overview.bars} barMs={60_000} title="Sessions ended per minute" />
 */
export function StackedBars(p: { bars: Bar[]; barMs: number; title: string }) {
  const max = Math.max(1, ...p.bars.map((b) => b.completed + b.error + b.stopped));
  const plotW = W - PAD.left;
  const plotH = H - PAD.bottom - PAD.top;
  const bw = plotW / Math.max(1, p.bars.length);
  const y = (n: number) => (n / max) * plotH;
  const ticks = [0, Math.floor(p.bars.length / 2), p.bars.length - 1];
  return (
    <svg
      class="chart"
      viewBox={`0 0 ${W} ${H}`}
      role="img"
      aria-label={p.title}
      data-max={String(max)}
    >
      <title>{p.title}</title>
      <line class="axis" x1={PAD.left} y1={H - PAD.bottom} x2={W} y2={H - PAD.bottom} />
      <text class="tick" x={PAD.left - 4} y={PAD.top + 10} text-anchor="end">
        {String(max)}
      </text>
      <text class="tick" x={PAD.left - 4} y={H - PAD.bottom} text-anchor="end">
        0
      </text>
      {p.bars.map((b, i) => {
        let base = H - PAD.bottom;
        const total = b.completed + b.error + b.stopped;
        return (
          <g
            class="bar"
            data-start={new Date(b.start).toISOString()}
            data-completed={String(b.completed)}
            data-error={String(b.error)}
            data-stopped={String(b.stopped)}
          >
            <title>
              {`${label(b.start, p.barMs)}: ${total} ended (${b.completed} completed, ${b.error} error, ${b.stopped} stopped), ${b.created} created`}
            </title>
            <rect class="hit" x={PAD.left + i * bw} y={PAD.top} width={bw} height={plotH} />
            {STACK.map((s) => {
              const h = y(b[s]);
              base -= h;
              return h > 0 ? (
                <rect
                  class={`fill-${s}`}
                  x={PAD.left + i * bw + 0.5}
                  y={base}
                  width={Math.max(1, bw - 1)}
                  height={h}
                />
              ) : null;
            })}
          </g>
        );
      })}
      {ticks.map((i) =>
        p.bars[i] ? (
          <text
            class="tick"
            x={PAD.left + i * bw + bw / 2}
            y={H - 4}
            text-anchor={i === 0 ? "start" : i === p.bars.length - 1 ? "end" : "middle"}
          >
            {label(p.bars[i].start, p.barMs)}
          </text>
        ) : null,
      )}
    </svg>
  );
}
