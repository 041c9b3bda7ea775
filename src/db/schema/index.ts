export * from "./accounts";
export * from "./events";
export * from "./files";
export * from "./forms";
export * from "./tasks";
export * from "./exports";
