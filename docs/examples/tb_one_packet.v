// The smallest check of a generated network on a Verilog simulator (Verilog-2005): PE 0 sends
// one packet to PE DEST while PE DEST sends one to PE 0; both must arrive intact, with the
// first/last marks on the right flits, and nothing may be dropped. Prints "PASS ..." with each
// packet's latency (head accepted at the source -> head ejected) or "FAIL ..." and finishes.
//
// The network's module name comes in as the macro TWINNET_TOP, its sizes and the two head flits
// as parameters (net_params.py --iverilog writes the flags from the manifest).

module tb_one_packet;
  parameter P = 2;          // PEs
  parameter W = 32;         // flit width
  parameter L = 4;          // flits per packet
  parameter DEST = 1;       // the PE that PE 0 talks to
  parameter HEAD_FWD = 0;   // head flit PE 0 -> PE DEST
  parameter HEAD_BACK = 0;  // head flit PE DEST -> PE 0
  parameter TIMEOUT = 2000;

  reg clk = 0, rst = 1;
  reg [P-1:0] in_valid = 0, in_first = 0, in_last = 0;
  reg [P-1:0] out_ready = {P{1'b1}};
  reg [P*W-1:0] in_data = 0;
  wire [P-1:0] in_ready, out_valid, out_first, out_last;
  wire [P*W-1:0] out_data;
  wire [31:0] drop_count;

  `TWINNET_TOP dut (
    .clk(clk), .rst(rst),
    .pe_in_valid(in_valid), .pe_in_first(in_first), .pe_in_last(in_last),
    .pe_in_data(in_data), .pe_in_ready(in_ready),
    .pe_out_valid(out_valid), .pe_out_first(out_first), .pe_out_last(out_last),
    .pe_out_data(out_data), .pe_out_ready(out_ready),
    .drop_count(drop_count));

  always #5 clk = ~clk;

  // Flit i of packet `which` (0: PE 0 -> DEST, 1: DEST -> PE 0); body flits are distinct words.
  function [W-1:0] flit(input integer which, input integer i);
    flit = i == 0 ? (which ? HEAD_BACK : HEAD_FWD) : 32'h9E3779B9 * (i + 8 * which);
  endfunction

  integer src[0:1], dst[0:1];  // PE numbers of each packet's source and destination
  integer sent[0:1], got[0:1], accepted_at[0:1], ejected_at[0:1];
  integer k, cycle = 0, errors = 0;
  initial begin
    src[0] = 0; dst[0] = DEST; src[1] = DEST; dst[1] = 0;
    for (k = 0; k < 2; k = k + 1) begin
      sent[k] = 0; got[k] = 0;
    end
    repeat (4) @(posedge clk);
    rst <= 0;
  end

  // One synchronous process: values read at the edge are those of the cycle that ends there
  // (a flit moved if valid and ready were both high); new inputs are driven with <=.
  always @(posedge clk) if (!rst) begin
    cycle = cycle + 1;
    for (k = 0; k < 2; k = k + 1) begin
      if (in_valid[src[k]] && in_ready[src[k]]) begin
        if (sent[k] == 0) accepted_at[k] = cycle;
        sent[k] = sent[k] + 1;
      end
      in_valid[src[k]] <= sent[k] < L;
      in_first[src[k]] <= sent[k] == 0;
      in_last[src[k]] <= sent[k] == L - 1;
      in_data[src[k] * W +: W] <= flit(k, sent[k]);
      if (out_valid[dst[k]] && out_ready[dst[k]]) begin
        if (got[k] == L || out_data[dst[k] * W +: W] !== flit(k, got[k])
            || out_first[dst[k]] !== (got[k] == 0) || out_last[dst[k]] !== (got[k] == L - 1)) begin
          $display("FAIL: PE %0d got flit %h (first %b, last %b) as flit %0d of the packet from PE %0d",
                   dst[k], out_data[dst[k] * W +: W], out_first[dst[k]], out_last[dst[k]],
                   got[k], src[k]);
          errors = errors + 1;
        end
        if (got[k] == 0) ejected_at[k] = cycle;
        got[k] = got[k] + 1;
      end
    end
    if (errors || drop_count !== 0 || cycle == TIMEOUT) begin
      $display("FAIL: %0d bad flits, drop_count %0d, %0d/%0d and %0d/%0d flits delivered after %0d cycles",
               errors, drop_count, got[0], L, got[1], L, cycle);
      $finish;
    end
    if (got[0] == L && got[1] == L) begin
      $display("PASS: PE %0d -> PE %0d latency %0d cycles, PE %0d -> PE %0d latency %0d cycles",
               src[0], dst[0], ejected_at[0] - accepted_at[0],
               src[1], dst[1], ejected_at[1] - accepted_at[1]);
      $finish;
    end
  end
endmodule
