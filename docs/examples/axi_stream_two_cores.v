`timescale 1ns/1ps
// Two cores on a generated 2x2 torus with AXI4-Stream interfaces (docs/axi-stream.md):
//
//   twinnet gen torus --radix 2,2 --ni axi-stream --out out
//
// Core A, at PE 0, sends the frame "hello" (two beats of 3 bytes, the second with 2) and the
// frame "!" to PE 3; core B, at PE 3, takes every beat and checks the bytes, the frame ends
// and the sender's number on tid. The other PEs send nothing and take everything.
module axi_stream_two_cores;
  reg clk = 0, rst = 1;
  always #5 clk = ~clk;

  reg [23:0] a_tdata = 0;
  reg [2:0] a_tkeep = 0;
  reg a_tlast = 0, a_tvalid = 0;
  wire a_tready;
  wire [23:0] b_tdata;
  wire [2:0] b_tkeep;
  wire [1:0] b_tid;
  wire b_tlast, b_tvalid;

  torus2_k2_bubble_axis3_axis network (
    .clk(clk), .rst(rst),
    .s_axis_0_tvalid(a_tvalid), .s_axis_0_tready(a_tready), .s_axis_0_tdata(a_tdata),
    .s_axis_0_tkeep(a_tkeep), .s_axis_0_tlast(a_tlast), .s_axis_0_tdest(2'd3),
    .m_axis_3_tvalid(b_tvalid), .m_axis_3_tready(1'b1), .m_axis_3_tdata(b_tdata),
    .m_axis_3_tkeep(b_tkeep), .m_axis_3_tlast(b_tlast), .m_axis_3_tid(b_tid),
    .s_axis_1_tvalid(1'b0), .s_axis_2_tvalid(1'b0), .s_axis_3_tvalid(1'b0),
    .m_axis_0_tready(1'b1), .m_axis_1_tready(1'b1), .m_axis_2_tready(1'b1));

  // Core A: one beat per call, held until the interface takes it.
  task send(input [23:0] data, input [2:0] keep, input last);
    begin
      a_tdata <= data; a_tkeep <= keep; a_tlast <= last; a_tvalid <= 1;
      @(posedge clk);
      while (!a_tready) @(posedge clk);
      a_tvalid <= 0;
    end
  endtask

  initial begin
    repeat (4) @(posedge clk);
    rst <= 0;
    @(posedge clk);
    send({"l", "e", "h"}, 3'b111, 0);
    send({8'h00, "o", "l"}, 3'b011, 1);
    send({8'h00, 8'h00, "!"}, 3'b001, 1);
  end

  // Core B: the bytes tkeep marks, in order; a frame ends on tlast.
  reg [8*8-1:0] got = 0;
  integer bytes = 0, frames = 0, i;
  reg ok = 1;
  always @(posedge clk) if (!rst && b_tvalid) begin
    for (i = 0; i < 3; i = i + 1)
      if (b_tkeep[i]) begin
        got = {got[8*7-1:0], b_tdata[8*i +: 8]};
        bytes = bytes + 1;
      end
    if (b_tid != 0) ok = 0;
    if (b_tlast) begin
      frames = frames + 1;
      if ((frames == 1 && bytes != 5) || (frames == 2 && bytes != 6)) ok = 0;
    end
  end

  initial begin
    wait (frames == 2);
    @(posedge clk);
    if (ok && got[6*8-1:0] == "hello!") $display("PASS: two frames from PE 0, 6 bytes");
    else $display("FAIL: %0d frames, %0d bytes, got %h", frames, bytes, got);
    $finish;
  end
  initial begin
    #100000 $display("FAIL: timeout, %0d frames", frames);
    $finish;
  end
endmodule
