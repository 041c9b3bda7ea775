import { useEffect, useId, useRef } from "preact/hooks";

export type Pad = { canvas: HTMLCanvasElement | null; drawn: boolean };

/** A signature drawn with a finger, mouse or pen (Pointer Events), kept as a PNG. */
export function SignaturePad(props: { pad: { current: Pad }; label: string; clearLabel: string }) {
  const ref = useRef<HTMLCanvasElement>(null);
  const id = useId();
  useEffect(() => {
    const c = ref.current!;
    props.pad.current.canvas = c;
    const ctx = c.getContext("2d")!;
    ctx.lineWidth = 2.5;
    ctx.lineCap = "round";
    ctx.strokeStyle = "#111";
    let down = false;
    const at = (e: PointerEvent) => {
      const r = c.getBoundingClientRect();
      return [
        ((e.clientX - r.left) * c.width) / r.width,
        ((e.clientY - r.top) * c.height) / r.height,
      ] as const;
    };
    const start = (e: PointerEvent) => {
      down = true;
      c.setPointerCapture(e.pointerId);
      const [x, y] = at(e);
      ctx.beginPath();
      ctx.moveTo(x, y);
    };
    const move = (e: PointerEvent) => {
      if (!down) return;
      const [x, y] = at(e);
      ctx.lineTo(x, y);
      ctx.stroke();
      props.pad.current.drawn = true;
    };
    const end = () => {
      down = false;
    };
    c.addEventListener("pointerdown", start);
    c.addEventListener("pointermove", move);
    c.addEventListener("pointerup", end);
    c.addEventListener("pointercancel", end);
    return () => {
      c.removeEventListener("pointerdown", start);
      c.removeEventListener("pointermove", move);
      c.removeEventListener("pointerup", end);
      c.removeEventListener("pointercancel", end);
    };
  }, []);
  return (
    <div class="signature">
      <span id={id}>{props.label}</span>
      <canvas ref={ref} width={600} height={220} role="img" aria-labelledby={id} />
      <button
        type="button"
        onClick={() => {
          const c = ref.current!;
          c.getContext("2d")!.clearRect(0, 0, c.width, c.height);
          props.pad.current.drawn = false;
        }}
      >
        {props.clearLabel}
      </button>
    </div>
  );
}

/** The pad's drawing as a PNG, or null when nothing is drawn. */
export async function padImage(pad: Pad): Promise<Blob | null> {
  if (!pad.drawn || !pad.canvas) return null;
  return new Promise<Blob | null>((r) => pad.canvas!.toBlob(r, "image/png"));
}
