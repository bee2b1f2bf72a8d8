"""Matthew Kelly's five-link biped, transcribed from OptimTraj's machine-generated MATLAB, for the tests.

Source: https://github.com/MatthewPeterKelly/OptimTraj, commit 27bcf50697a0a8ec95fbe729b418d0fd72b66f3b, files
``demo/fiveLinkBiped/autoGen_dynSs.m``, ``autoGen_cst_heelStrike.m``, ``autoGen_cst_steplength.m``,
``autoGen_energy.m`` and ``autoGen_getPoints.m`` (written by MATLAB's Symbolic Math Toolbox 6.2 from
``Derive_Equations.m``; Kelly, "An introduction to trajectory optimization", SIAM Review 59(4), 2017, appendix),
parameters from ``getPhysicalParameters.m``. The ``autoGen_*`` functions below are translated mechanically:
``.*`` → ``*``, ``.^`` → ``**``, ``./`` → ``/``, ``[a;b]`` → ``[a, b]``, up to the outputs used here (the gradient
outputs ``mz``, ``fz``, … are left out); only the wrappers at the end are written by hand.

Kelly's angles ``q1..q5`` (stance tibia, stance femur, torso, swing femur, swing tibia) are absolute,
counter-clockwise, zero with the link vertical; the stance foot is pinned at the origin.

Licence of the source (OptimTraj's LICENSE.md):

    The MIT License (MIT)

    Copyright (c) 2016 Matthew P. Kelly

    Permission is hereby granted, free of charge, to any person obtaining a copy
    of this software and associated documentation files (the "Software"), to deal
    in the Software without restriction, including without limitation the rights
    to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
    copies of the Software, and to permit persons to whom the Software is
    furnished to do so, subject to the following conditions:

    The above copyright notice and this permission notice shall be included in
    all copies or substantial portions of the Software.

    THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
    IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
    FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
    AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
    LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
    OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN
    THE SOFTWARE.
"""
# ruff: noqa: E501, E741

import inspect

import numpy as np
from numpy import cos, sin


def autoGen_dynSs(q1,q2,q3,q4,q5,dq1,dq2,dq3,dq4,dq5,u1,u2,u3,u4,u5,m1,m2,m3,m4,m5,I1,I2,I3,I4,I5,l1,l2,l3,l4,c1,c2,c3,c4,c5,g,empty):
    t2 = l1**2
    t3 = q1-q2
    t4 = cos(t3)
    t5 = q1-q3
    t6 = cos(t5)
    t7 = q1-q4
    t8 = cos(t7)
    t9 = q1-q5
    t10 = cos(t9)
    t11 = c3*m3*t6
    t12 = c4*m4*t8
    t13 = c5*m5*t10
    t14 = l4*m5*t8
    t15 = c4*l1*m4*t8
    t16 = c5*l1*m5*t10
    t17 = l1*l4*m5*t8
    t18 = sin(q2)
    t19 = sin(q3)
    t20 = sin(q1)
    t21 = l1*t20
    t22 = l2*t18
    t23 = cos(q2)
    t24 = cos(q1)
    t25 = l1*t24
    t26 = l2*t23
    t27 = sin(q4)
    t28 = c2-l2
    t29 = cos(q3)
    t30 = cos(q4)
    t31 = l2**2
    t32 = q2-q3
    t33 = cos(t32)
    t34 = q2-q4
    t35 = cos(t34)
    t36 = q2-q5
    t37 = cos(t36)
    t38 = c4*l2*m4*t35
    t39 = c5*l2*m5*t37
    t40 = l2*l4*m5*t35
    t41 = l3*t29
    t46 = c3*t29
    t42 = t25+t26+t41-t46
    t43 = c3-l3
    t44 = l3*t19
    t47 = c3*t19
    t45 = t21+t22+t44-t47
    t48 = sin(q5)
    t52 = c4*t30
    t49 = t25+t26-t52
    t53 = c4*t27
    t50 = t21+t22-t53
    t51 = cos(q5)
    t54 = c4**2
    t55 = l4**2
    t56 = q4-q5
    t57 = cos(t56)
    t59 = c5*l4*m5*t57
    t58 = -I4-t59-m4*t54-m5*t55
    t60 = c5*t48
    t61 = l4*t27
    t62 = c5*t51
    t63 = l4*t30
    t64 = -t26+t62+t63
    t65 = -t22+t60+t61
    t66 = c5**2
    t68 = m5*t66
    t67 = -I5-t59-t68
    t69 = t21+t22-t60-t61
    t71 = c2*t18
    t70 = t21+t22-t71
    t72 = dq2**2
    t73 = dq1**2
    t84 = c2*t23
    t74 = t25+t26-t84
    t75 = l1*t20*t73
    t76 = dq4**2
    t77 = l1*t24*t73
    t78 = l2*t18*t72
    t79 = dq3**2
    t80 = l2*t23*t72
    t81 = dq5**2
    t82 = t25+t26-t62-t63
    t102 = c4*t30*t76
    t83 = t77+t80-t102
    t85 = t22-t71
    t86 = t72*t85
    t87 = t75+t86
    t88 = t22+t44-t47
    t89 = t79*(t41-t46)
    t90 = t77+t80+t89
    t103 = c4*t27*t76
    t91 = t75+t78-t103
    t92 = t26-t52
    t99 = c5*t51*t81
    t100 = l4*t30*t76
    t93 = t77+t80-t99-t100
    t94 = t79*(t44-t47)
    t95 = t75+t78+t94
    t96 = t26+t41-t46
    t97 = t22-t53
    t98 = t26-t84
    t101 = t60+t61
    t104 = t62+t63
    t105 = m5*t104*(t75+t78-c5*t48*t81-l4*t27*t76)
    t106 = g*m5*t101
    t107 = c4*g*m4*t27
    t108 = c4*m4*t30*t91
    t109 = sin(t9)
    t110 = sin(t3)
    t111 = sin(t5)
    t112 = sin(t7)
    t113 = c2*m2*t110
    t114 = c3*m3*t111
    t115 = c4*m4*t112
    t116 = c5*m5*t109
    t117 = l4*m5*t112
    t119 = l3*m3*t111
    t190 = l2*m2*t110
    t191 = l2*m3*t110
    t192 = l2*m4*t110
    t193 = l2*m5*t110
    t118 = t113+t114+t115+t116+t117-t119-t190-t191-t192-t193
    t120 = l2*m2
    t121 = l2*m3
    t122 = l2*m4
    t123 = l2*m5
    t126 = c2*m2
    t124 = t120+t121+t122+t123-t126
    t125 = l1*t110*t124
    t127 = sin(t36)
    t128 = sin(t32)
    t129 = sin(t34)
    t130 = c3*m3*t128
    t131 = c4*m4*t129
    t132 = c5*m5*t127
    t133 = l4*m5*t129
    t198 = l3*m3*t128
    t134 = t130+t131+t132+t133-t198
    t135 = c4*m4
    t136 = l4*m5
    t137 = t135+t136
    t138 = l1*m3*t43*t111
    t139 = l2*m3*t43*t128
    t140 = l1*t112*t137
    t141 = l2*t129*t137
    t142 = sin(t56)
    t143 = c4*l2*m4*t129
    t144 = c5*l4*m5*t142
    t145 = l2*l4*m5*t129
    t146 = c5*l1*m5*t109
    t147 = c5*l2*m5*t127
    t148 = c2*m2*t4
    t150 = l3*m3*t6
    t149 = t11+t12+t13+t14+t148-t150-l2*m2*t4-l2*m3*t4-l2*m4*t4-l2*m5*t4
    t151 = c5*l1*m5*t10*t73
    t152 = c2*l1*m2*t4*t73
    t153 = l1*l2*m2*t4*t72
    t154 = l1*l2*m3*t4*t72
    t155 = l1*l2*m4*t4*t72
    t156 = l1*l2*m5*t4*t72
    t157 = c2*g*m2*t23
    t158 = c3*l2*m3*t33*t72
    t159 = c4*l2*m4*t35*t72
    t160 = c5*l2*m5*t37*t72
    t161 = l1*l2*m2*t4*t73
    t162 = l1*l2*m3*t4*t73
    t163 = l1*l2*m4*t4*t73
    t164 = l1*l2*m5*t4*t73
    t165 = l2*l3*m3*t33*t79
    t166 = l2*l4*m5*t35*t72
    t167 = c3*m3*t33
    t168 = c4*m4*t35
    t169 = c5*m5*t37
    t170 = l4*m5*t35
    t171 = t167+t168+t169+t170-l3*m3*t33
    m = [-I1+t15+t16+t17-m1*t2-m2*t2-m3*t2-m4*t2-m5*t2-c1**2*m1+c1*l1*m1*2.0+c2*l1*m2*t4+c3*l1*m3*t6-l1*l2*m2*t4-l1*l2*m3*t4-l1*l2*m4*t4-l1*l2*m5*t4-l1*l3*m3*t6, l1*t149, l1*(t11+t12+t13+t14-l3*m3*t6), t15+t16+t17, t16, -I2-l2*m3*t18*t45-l2*m3*t23*t42-l2*m4*t18*t50-l2*m4*t23*t49+m2*t18*t28*t70+m2*t23*t28*t74-l2*m5*t18*(t21+t22-c5*t48-l4*t27)-l2*m5*t23*(t25+t26-c5*t51-l4*t30), -I2+t38+t39+t40-m2*t31-m3*t31-m4*t31-m5*t31-c2**2*m2+c2*l2*m2*2.0+c3*l2*m3*t33-l2*l3*m3*t33, l2*t171, t38+t39+t40, t39, -I3+m3*t19*t43*t45+m3*t29*t42*t43, -I3+m3*t19*t43*t88+m3*t29*t43*t96, -I3+empty-c3**2*m3-l3**2*m3+c3*l3*m3*2.0, -I4+c4*m4*t27*t50+c4*m4*t30*t49+l4*m5*t27*(t21+t22-c5*t48-l4*t27)+l4*m5*t30*(t25+t26-c5*t51-l4*t30), -I4+c4*m4*t30*t92+c4*m4*t27*t97-l4*m5*t27*t65-l4*m5*t30*t64, t58, t58, -t59, -I5+c5*m5*t48*t69+c5*m5*t51*t82, -I5-c5*m5*t48*t65-c5*m5*t51*t64, t67, t67, -I5+empty-t68]
    mi = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 1.0e1, 1.1e1, 1.2e1, 1.3e1, 1.6e1, 1.7e1, 1.8e1, 1.9e1, 2.0e1, 2.1e1, 2.2e1, 2.3e1, 2.4e1, 2.5e1]
    f = [-u1+m5*t93*(t21+t22-t60-t61)-g*m1*(t21-c1*t20)-g*m3*t45-g*m4*t50-g*m2*t70-g*m5*t69+m4*t50*t83+m3*t45*t90-m3*t42*t95-m4*t49*t91-m2*t74*t87-m5*t82*(t75+t78-c5*t48*t81-l4*t27*t76)+m2*t70*(t77+t72*(t26-c2*t23)), -u2+m2*(t77+t72*t98)*(t22-t71)+g*m5*t65-g*m2*t85-g*m3*t88-g*m4*t97-m5*t65*t93+m3*t88*t90+m4*t83*t97-m2*t87*t98-m4*t91*t92-m3*t95*t96+m5*t64*(t75+t78-c5*t48*t81-l4*t27*t76), t105+t106+t107+t108-u3-m5*t93*t101-c4*m4*t27*t83+g*m3*t19*t43+m3*t29*t43*(t75+t78-c3*t19*t79+l3*t19*t79)-m3*t19*t43*(t77+t80-c3*t29*t79+l3*t29*t79), t105+t106+t107+t108-u4-m5*t93*t101-c4*m4*t27*t83, -u5+c5*g*m5*t48+c5*l1*m5*t73*t109+c5*l2*m5*t72*t127-c5*l4*m5*t76*t142]
    fi = [1.0, 2.0, 3.0, 4.0, 5.0]
    return m, mi, f, fi

def autoGen_cst_heelStrike(q1p,q2p,q3p,q4p,q5p,q1m,q2m,q3m,q4m,q5m,dq1m,dq2m,dq3m,dq4m,dq5m,m1,m2,m3,m4,m5,I1,I2,I3,I4,I5,l1,l2,l3,l4,l5,c1,c2,c3,c4,c5,empty):
    t2 = l1**2
    t3 = q1p-q2p
    t4 = cos(t3)
    t5 = q1p-q3p
    t6 = cos(t5)
    t7 = q1p-q4p
    t8 = cos(t7)
    t9 = q1p-q5p
    t10 = cos(t9)
    t11 = c3*m3*t6
    t12 = c4*m4*t8
    t13 = c5*m5*t10
    t14 = l4*m5*t8
    t15 = c4*l1*m4*t8
    t16 = c5*l1*m5*t10
    t17 = l1*l4*m5*t8
    t18 = sin(q2p)
    t19 = sin(q3p)
    t20 = sin(q1p)
    t21 = l1*t20
    t22 = l2*t18
    t23 = cos(q2p)
    t24 = cos(q1p)
    t25 = l1*t24
    t26 = l2*t23
    t27 = sin(q4p)
    t28 = c2-l2
    t29 = cos(q3p)
    t30 = cos(q4p)
    t31 = l2**2
    t32 = q2p-q3p
    t33 = cos(t32)
    t34 = q2p-q4p
    t35 = cos(t34)
    t36 = q2p-q5p
    t37 = cos(t36)
    t38 = c4*l2*m4*t35
    t39 = c5*l2*m5*t37
    t40 = l2*l4*m5*t35
    t41 = l3*t29
    t46 = c3*t29
    t42 = t25+t26+t41-t46
    t43 = c3-l3
    t44 = l3*t19
    t47 = c3*t19
    t45 = t21+t22+t44-t47
    t48 = sin(q5p)
    t52 = c4*t30
    t49 = t25+t26-t52
    t53 = c4*t27
    t50 = t21+t22-t53
    t51 = cos(q5p)
    t54 = c4**2
    t55 = l4**2
    t56 = q4p-q5p
    t57 = cos(t56)
    t59 = c5*l4*m5*t57
    t228 = m4*t54
    t58 = -I4-t59-t228-m5*t55
    t60 = c5*t48
    t61 = l4*t27
    t62 = c5*t51
    t63 = l4*t30
    t64 = -t26+t62+t63
    t65 = -t22+t60+t61
    t66 = c5**2
    t68 = m5*t66
    t67 = -I5-t59-t68
    t69 = cos(q3m)
    t70 = cos(q2m)
    t71 = cos(q4m)
    t72 = l4*t71
    t73 = cos(q5m)
    t74 = l5*t73
    t75 = cos(q1m)
    t76 = dq1m*l1*t75
    t77 = dq2m*l2*t70
    t78 = sin(q3m)
    t79 = sin(q2m)
    t80 = sin(q4m)
    t81 = l4*t80
    t82 = sin(q5m)
    t83 = l5*t82
    t84 = sin(q1m)
    t85 = dq1m*l1*t84
    t86 = dq2m*l2*t79
    t87 = c5-l5
    t88 = c1-l1
    t102 = c2*dq2m*t79
    t89 = t85+t86-t102
    t90 = l3*t69
    t91 = dq3m*l3*t69
    t101 = c3*dq3m*t69
    t92 = t76+t77+t91-t101
    t100 = c2*dq2m*t70
    t93 = t76+t77-t100
    t94 = l3*t78
    t95 = dq3m*l3*t78
    t103 = c3*dq3m*t78
    t96 = t85+t86+t95-t103
    t97 = t76+t77-c4*dq4m*t71
    t98 = c4-l4
    t99 = t85+t86-c4*dq4m*t80
    t104 = c1*t75
    t105 = l2*t70
    t106 = c1*t84
    t107 = l2*t79
    t108 = c2*m2*t70*t93
    t109 = c2*m2*t79*t89
    t110 = t104+t105
    t111 = t106+t107
    t112 = c1**2
    t113 = sin(t3)
    t114 = sin(t5)
    t115 = sin(t7)
    t116 = c2*m2*t113
    t117 = c3*m3*t114
    t118 = c4*m4*t115
    t119 = sin(t9)
    t120 = c5*m5*t119
    t121 = l4*m5*t115
    t123 = l3*m3*t114
    t122 = t116+t117+t118+t120+t121-t123-l2*m2*t113-l2*m3*t113-l2*m4*t113-l2*m5*t113
    t124 = l2*m2
    t125 = l2*m3
    t126 = l2*m4
    t127 = l2*m5
    t130 = c2*m2
    t128 = t124+t125+t126+t127-t130
    t129 = l1*t113*t128
    t131 = sin(t32)
    t132 = sin(t34)
    t133 = sin(t36)
    t134 = c3*m3*t131
    t135 = c4*m4*t132
    t136 = c5*m5*t133
    t137 = l4*m5*t132
    t138 = t134+t135+t136+t137-l3*m3*t131
    t139 = c4*m4
    t140 = l4*m5
    t141 = t139+t140
    t142 = l1*m3*t43*t114
    t143 = l2*m3*t43*t131
    t144 = l1*t115*t141
    t145 = l2*t132*t141
    t146 = c4*l2*m4*t132
    t147 = sin(t56)
    t148 = c5*l4*m5*t147
    t149 = l2*l4*m5*t132
    t150 = c5*l1*m5*t119
    t151 = c5*l2*m5*t133
    t152 = t25+t26-t62-t63
    t153 = q1m-q2m
    t154 = sin(t153)
    t155 = q1m-q4m
    t156 = sin(t155)
    t157 = q1m-q5m
    t158 = sin(t157)
    t159 = q1m-q3m
    t160 = sin(t159)
    t161 = c1*l2*m1*t154
    t162 = l1*l3*m3*t160
    t163 = l1*l4*m1*t156
    t164 = l1*l4*m2*t156
    t165 = l1*l4*m3*t156
    t166 = l1*l4*m4*t156
    t167 = q2m-q4m
    t168 = sin(t167)
    t169 = q2m-q5m
    t170 = sin(t169)
    t171 = q2m-q3m
    t172 = sin(t171)
    t173 = c2*dq1m*l1*m2*t154
    t174 = dq1m*l1*l2*m1*t154
    t175 = dq2m*l2*l3*m3*t172
    t176 = dq2m*l2*l4*m2*t168
    t177 = dq2m*l2*l4*m3*t168
    t178 = dq2m*l2*l4*m4*t168
    t179 = c2*l1*m2
    t180 = l1*l2*m1
    t181 = t179+t180-c1*l2*m1
    t182 = q3m-q4m
    t183 = sin(t182)
    t184 = dq3m*l4*t183
    t185 = dq1m*l1*t160
    t186 = dq2m*l2*t172
    t187 = q4m-q5m
    t188 = sin(t187)
    t189 = c1*dq1m*l4*m1*t156
    t190 = c4*dq1m*l1*m4*t156
    t191 = c2*dq2m*l4*m2*t168
    t192 = c4*dq2m*l2*m4*t168
    t193 = c3*dq3m*l4*m3*t183
    t194 = q3m-q5m
    t195 = sin(t194)
    t196 = c5*dq4m*l4*m5*t188
    t197 = dq2m*l2*l5*m2*t170
    t198 = dq2m*l2*l5*m3*t170
    t199 = dq2m*l2*l5*m4*t170
    t200 = dq2m*l2*l5*m5*t170
    t201 = m1*t112
    t202 = cos(t153)
    t203 = cos(t155)
    t204 = cos(t157)
    t205 = cos(t159)
    t206 = c1*l1*m1
    t207 = c2*l1*m2*t202
    t208 = c1*l4*m1*t203
    t209 = c3*l1*m3*t205
    t210 = c4*l1*m4*t203
    t211 = l1*l2*m1*t202
    t212 = c2**2
    t213 = cos(t167)
    t214 = cos(t169)
    t215 = cos(t171)
    t216 = c2*l2*m2
    t217 = c3*l2*m3*t215
    t218 = c2*l4*m2*t213
    t219 = c4*l2*m4*t213
    t222 = c3*t69
    t220 = t72+t74+t90-t222
    t223 = c3*t78
    t221 = t81+t83+t94-t223
    t224 = c3**2
    t225 = l3**2
    t226 = c3*l3*m3*2.0
    t227 = -I3+empty+t226-m3*t224-m3*t225
    m = [-I1+t15+t16+t17-m1*t2-m2*t2-m3*t2-m4*t2-m5*t2-m1*t112+c1*l1*m1*2.0+c2*l1*m2*t4+c3*l1*m3*t6-l1*l2*m2*t4-l1*l2*m3*t4-l1*l2*m4*t4-l1*l2*m5*t4-l1*l3*m3*t6, l1*(t11+t12+t13+t14+c2*m2*t4-l2*m2*t4-l2*m3*t4-l2*m4*t4-l2*m5*t4-l3*m3*t6), l1*(t11+t12+t13+t14-l3*m3*t6), t15+t16+t17, t16, -I2-l2*m3*t18*t45-l2*m3*t23*t42-l2*m4*t18*t50-l2*m4*t23*t49+m2*t18*t28*(t21+t22-c2*t18)+m2*t23*t28*(t25+t26-c2*t23)-l2*m5*t18*(t21+t22-c5*t48-l4*t27)-l2*m5*t23*(t25+t26-c5*t51-l4*t30), -I2+t38+t39+t40-m2*t31-m3*t31-m4*t31-m5*t31-m2*t212+c2*l2*m2*2.0+c3*l2*m3*t33-l2*l3*m3*t33, l2*(c3*m3*t33+c4*m4*t35+c5*m5*t37-l3*m3*t33+l4*m5*t35), t38+t39+t40, t39, -I3+m3*t19*t43*t45+m3*t29*t42*t43, -I3+m3*t19*t43*(t22+t44-t47)+m3*t29*t43*(t26+t41-t46), t227, -I4+c4*m4*t27*t50+c4*m4*t30*t49+l4*m5*t27*(t21+t22-c5*t48-l4*t27)+l4*m5*t30*(t25+t26-c5*t51-l4*t30), -I4-l4*m5*t27*t65-l4*m5*t30*t64+c4*m4*t27*(t22-t53)+c4*m4*t30*(t26-t52), t58, t58, -t59, -I5+c5*m5*t51*t152+c5*m5*t48*(t21+t22-t60-t61), -I5-c5*m5*t48*t65-c5*m5*t51*t64, t67, t67, -I5+empty-t68]
    mi = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 1.0e1, 1.1e1, 1.2e1, 1.3e1, 1.6e1, 1.7e1, 1.8e1, 1.9e1, 2.0e1, 2.1e1, 2.2e1, 2.3e1, 2.4e1, 2.5e1]
    f = [-I1*dq1m-I2*dq2m-I3*dq3m-I4*dq4m-I5*dq5m-m3*t92*t220-m3*t96*t221-m2*t93*(t72+t74-c2*t70)-m4*t97*(t72+t74-c4*t71)-m2*t89*(t81+t83-c2*t79)-m4*t99*(t81+t83-c4*t80)+m5*t73*t87*(t76+t77-c5*dq5m*t73-dq4m*l4*t71)+m5*t82*t87*(t85+t86-c5*dq5m*t82-dq4m*l4*t80)+dq1m*m1*t75*t88*(t72+t74-c1*t75-l2*t70)+dq1m*m1*t84*t88*(t81+t83-c1*t84-l2*t79), -I1*dq1m-I2*dq2m-I3*dq3m-I4*dq4m-m2*t93*(t72-c2*t70)-m2*t89*(t81-c2*t79)-m3*t92*(t72+t90-c3*t69)-m3*t96*(t81+t94-c3*t78)+m4*t71*t97*t98+m4*t80*t98*t99-dq1m*m1*t75*t88*(-t72+t104+t105)-dq1m*m1*t84*t88*(-t81+t106+t107), t108+t109-I1*dq1m-I2*dq2m-I3*dq3m+m3*t43*t69*t92+m3*t43*t78*t96-dq1m*m1*t75*t88*t110-dq1m*m1*t84*t88*t111, t108+t109-I1*dq1m-I2*dq2m-dq1m*m1*t75*t88*t110-dq1m*m1*t84*t88*t111, -dq1m*(I1+t201-c1*l1*m1)]
    fi = [1.0, 2.0, 3.0, 4.0, 5.0]
    return m, mi, f, fi

def autoGen_cst_steplength(q1m,q2m,q4m,q5m,l1,l2,l4,l5,stepLength):
    t2 = cos(q1m)
    t3 = l1*t2
    t4 = cos(q2m)
    t5 = l2*t4
    t6 = cos(q4m)
    t7 = cos(q5m)
    t8 = sin(q1m)
    t9 = sin(q2m)
    t10 = sin(q4m)
    t11 = l4*t10
    t12 = sin(q5m)
    t13 = l5*t12
    ceq = [-stepLength+t11+t13-l1*t8-l2*t9, t3+t5-l4*t6-l5*t7]
    return ceq

def autoGen_energy(q1,q2,q3,q4,q5,dq1,dq2,dq3,dq4,dq5,m1,m2,m3,m4,m5,I1,I2,I3,I4,I5,l1,l2,l3,l4,c1,c2,c3,c4,c5,g):
    t2 = dq1**2
    t3 = cos(q1)
    t26 = l1*t3
    t31 = c1*t3
    t4 = -t26+t31
    t5 = sin(q1)
    t6 = c1*t5-l1*t5
    t7 = cos(q2)
    t12 = dq1*l1*t3
    t27 = l2*t7
    t30 = c2*t7
    t8 = -t12-dq2*(t27-t30)
    t9 = sin(q2)
    t15 = dq1*l1*t5
    t10 = -t15+dq2*(c2*t9-l2*t9)
    t11 = cos(q3)
    t17 = dq2*l2*t7
    t25 = c3*t11
    t28 = l3*t11
    t13 = t12+t17-dq3*(t25-t28)
    t14 = sin(q3)
    t19 = dq2*l2*t9
    t16 = t15+t19-dq3*(c3*t14-l3*t14)
    t23 = cos(q4)
    t18 = t12+t17-c4*dq4*t23
    t21 = sin(q4)
    t20 = t15+t19-c4*dq4*t21
    t22 = t15+t19-c5*dq5*sin(q5)-dq4*l4*t21
    t29 = cos(q5)
    t24 = t12+t17-c5*dq5*t29-dq4*l4*t23
    KE = I1*t2*(1.0/2.0)+I2*dq2**2*(1.0/2.0)+I3*dq3**2*(1.0/2.0)+I4*dq4**2*(1.0/2.0)+I5*dq5**2*(1.0/2.0)+m1*(t2*t4**2+t2*t6**2)*(1.0/2.0)+m2*(t8**2+t10**2)*(1.0/2.0)+m3*(t13**2+t16**2)*(1.0/2.0)+m4*(t18**2+t20**2)*(1.0/2.0)+m5*(t22**2+t24**2)*(1.0/2.0)
    PE = g*m2*(t26+t27-t30)-g*m1*t4+g*m4*(t26+t27-c4*t23)+g*m3*(-t25+t26+t27+t28)+g*m5*(t26+t27-c5*t29-l4*t23)
    return KE, PE

def autoGen_getPoints(q1,q2,q3,q4,q5,l1,l2,l3,l4,l5,c1,c2,c3,c4,c5):
    t2 = sin(q1)
    t3 = cos(q1)
    t4 = l1*t3
    t5 = sin(q2)
    t6 = cos(q2)
    t7 = l2*t6
    t8 = sin(q4)
    t9 = l4*t8
    t10 = cos(q4)
    t11 = sin(q3)
    t12 = cos(q3)
    t13 = l3*t12
    t14 = sin(q5)
    t15 = cos(q5)
    P = [-l1*t2, t4, -l1*t2-l2*t5, t4+t7, -l1*t2-l2*t5-l3*t11, t4+t7+t13, t9-l1*t2-l2*t5, t4+t7-l4*t10, t9-l1*t2-l2*t5+l5*t14, t4+t7-l4*t10-l5*t15]
    Gvec = [c1*t2-l1*t2, t4-c1*t3, c2*t5-l1*t2-l2*t5, t4+t7-c2*t6, c3*t11-l1*t2-l2*t5-l3*t11, t4+t7+t13-c3*t12, c4*t8-l1*t2-l2*t5, t4+t7-c4*t10, t9+c5*t14-l1*t2-l2*t5, t4+t7-c5*t15-l4*t10]
    return P, Gvec


# -- hand-written wrappers --------------------------------------------------------------------------------------
def parameters(c3=0.2):
    """``getPhysicalParameters.m`` (RABBIT's masses, inertias and lengths as Kelly gives them) as a dict; `c3` is
    the torso's shoulders-to-COM distance (Kelly's 0.2 m puts the COM 0.425 m above the hip)."""
    p = dict(m1=3.2, m2=6.8, m3=20.0, m4=6.8, m5=3.2, I1=0.93, I2=1.08, I3=2.22, I4=1.08, I5=0.93,
             l1=0.4, l2=0.4, l3=0.625, l4=0.4, l5=0.4, c1=0.128, c2=0.163, c3=c3, c4=0.163, c5=0.128, g=9.81)
    return {k: float(v) for k, v in p.items()}


def _call(fn, p, **values):
    """``fn`` with its arguments picked by name from ``values`` and the parameters ``p`` (``empty = 0``)."""
    pool = {**p, **values, "empty": 0.0}
    return fn(**{name: pool[name] for name in inspect.signature(fn).parameters})


def _named(prefix, x, suffix=""):
    return {f"{prefix}{i + 1}{suffix}": float(v) for i, v in enumerate(x)}


def _matrix(m, mi):
    """The 5×5 matrix of the non-zero entries ``m`` at MATLAB's (1-based, column-major) linear indices ``mi``."""
    out = np.zeros(25)
    out[np.asarray(mi, dtype=int) - 1] = m
    return out.reshape(5, 5, order="F")


def dynamics(q, dq, u, p):
    """``ddq = MM \\ FF`` of ``autoGen_dynSs`` (``dynamics.m``): single stance, stance foot pinned."""
    m, mi, f, fi = _call(autoGen_dynSs, p, **_named("q", q), **_named("dq", dq), **_named("u", u))
    return np.linalg.solve(_matrix(m, mi), np.asarray(f, dtype=float)[np.asarray(fi, dtype=int) - 1])


def heel_strike(qm, dqm, p):
    """``cst_heelStrike.m``: post-impact angles ``qp = qm([5 4 3 2 1])`` and rates ``dqp = M \\ F``."""
    qp = np.asarray(qm, dtype=float)[::-1]
    m, mi, f, fi = _call(autoGen_cst_heelStrike, p, **_named("q", qp, "p"), **_named("q", qm, "m"),
                         **_named("dq", dqm, "m"))
    return qp, np.linalg.solve(_matrix(m, mi), np.asarray(f, dtype=float)[np.asarray(fi, dtype=int) - 1])


def swing_foot(qm, p):
    """The swing foot ``(x, y)`` from ``autoGen_cst_steplength`` with ``stepLength = 0`` (``qm``: all five
    angles; the torso's ``q3`` does not enter)."""
    return np.asarray(_call(autoGen_cst_steplength, p, **_named("q", qm, "m"), stepLength=0.0))


def energy(q, dq, p):
    """``(KE, PE)`` of ``autoGen_energy``."""
    return _call(autoGen_energy, p, **_named("q", q), **_named("dq", dq))


def points(q, p):
    """``autoGen_getPoints``: joints ``P1..P5`` (knee, hip, shoulders, swing knee, swing foot) and COMs
    ``G1..G5``, each ``(5, 2)``."""
    P, G = _call(autoGen_getPoints, p, **_named("q", q))
    return np.reshape(P, (5, 2)), np.reshape(G, (5, 2))
