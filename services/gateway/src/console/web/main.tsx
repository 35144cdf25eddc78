/**
 * The console: a small Preact app served by the gateway at /console, built by the gateway's build
 * (esbuild) from the packages npm installed. It is a client of the public API like any other.
 */
import "uplot/dist/uPlot.min.css";
import "./console.css";
import { render } from "preact";
import { App } from "./app";
import { interceptLinks } from "./router";

interceptLinks();
render(<App />, document.getElementById("app")!);
